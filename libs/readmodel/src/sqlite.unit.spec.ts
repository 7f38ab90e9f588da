import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readModelContract } from './readmodel.contract';
import { SqliteReadModelStore } from './sqlite';

readModelContract('sqlite', () => SqliteReadModelStore.open({ file: join(mkdtempSync(join(tmpdir(), 'udp-rm-')), 'read-models.sqlite') }));
