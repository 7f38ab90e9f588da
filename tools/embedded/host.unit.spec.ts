import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@udp/config';
import { closeServer, listen } from '@udp/runtime';
import express from 'express';
import { start } from './host';

it('refuses a taken gateway port before starting any service, naming PORT', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'udp-host-'));
  const { server, port } = await listen(express(), 0, '127.0.0.1');
  try {
    const starting = start({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    await expect(starting).rejects.toThrow(ConfigError);
    await expect(starting).rejects.toThrow(/set PORT to a free port/);
    // No service opened its store: nothing was started.
    expect(readdirSync(dataDir)).toEqual([]);
  } finally {
    await closeServer(server);
    rmSync(dataDir, { recursive: true, force: true });
  }
});
