import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storageContract } from './storage.contract';
import { FileExportStorage } from './storage';

const dir = mkdtempSync(join(tmpdir(), 'udp-export-files-'));
storageContract(
  'files',
  async () => new FileExportStorage(dir),
  async () => {
    // Nothing left behind: no zip and no partial file (the failed write's included).
    expect(readdirSync(dir)).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  },
);
