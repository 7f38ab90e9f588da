import { mkdtempSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import express from 'express';
import { InProcessBus } from '@udp/bus';
import { commonConfigSchema, loadConfig } from '@udp/config';
import { closeAdapters, openAdapters } from './adapters';
import { ConfigError } from '@udp/config';
import { TracedBus } from './traced-adapters';
import { assertPortFree, closeServer, listen } from './server';

describe('openAdapters', () => {
  it('chooses the embedded adapters when no server is configured, with files under DATA_DIR', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'udp-runtime-'));
    const shared = { bus: new InProcessBus() };
    const adapters = await openAdapters(loadConfig(commonConfigSchema, { DATA_DIR: dir }), 'demo-svc', shared);
    expect(adapters.describe).toEqual({ eventStore: 'sqlite', readModels: 'sqlite', bus: 'in-process' });
    expect(adapters.bus).toBeInstanceOf(TracedBus);
    expect((adapters.bus as TracedBus).inner).toBe(shared.bus);
    expect(existsSync(join(dir, 'demo-svc', 'events.sqlite'))).toBe(true);
    expect(existsSync(join(dir, 'secrets', 'internal-identity.key'))).toBe(true);
    await closeAdapters(adapters, shared);
  });
});

describe('the embedded read models as a service gets them (traced)', () => {
  it('drop an index the service no longer wants: it is gone from the file, as every other part of the store reaches it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'udp-runtime-'));
    const shared = { bus: new InProcessBus() };
    const config = loadConfig(commonConfigSchema, { DATA_DIR: dir });
    const indexes = () => {
      const db = new Database(join(dir, 'demo-svc', 'read-models.sqlite'), { readonly: true });
      const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'rm_notes'").pluck().all();
      db.close();
      return names;
    };
    const first = await openAdapters(config, 'demo-svc', shared);
    await first.readModels.ensureIndex('notes', { date: 1 });
    await first.readModels.collection<{ _id: string; date: number }>('notes').upsertIfNewer({ _id: 'n1', revision: 0, date: 5 });
    // A store rebuilt from nothing builds its indexes once caught up (as a service's start asks).
    await first.readModels.caughtUp!();
    await closeAdapters(first, shared);
    expect(indexes()).toContain('rm_notes__date_a');

    const again = await openAdapters(config, 'demo-svc', shared);
    await again.readModels.dropIndex!('notes', { date: 1 });
    await closeAdapters(again, shared);
    expect(indexes()).not.toContain('rm_notes__date_a');
  });
});

describe('listen', () => {
  it('binds the port the OS picks when PORT is 0', async () => {
    const { server, port } = await listen(express(), 0, '127.0.0.1');
    expect(port).toBeGreaterThan(0);
    await closeServer(server);
  });
});

describe('a port already in use', () => {
  it('is one line naming PORT, from the check before start-up and from listen alike', async () => {
    const { server, port } = await listen(express(), 0, '127.0.0.1');
    try {
      const check = assertPortFree(port, '127.0.0.1');
      await expect(check).rejects.toThrow(ConfigError);
      await expect(check).rejects.toThrow(
        `port ${port} on 127.0.0.1 is already in use (another instance running?): stop it, or set PORT to a free port`,
      );
      await expect(listen(express(), port, '127.0.0.1')).rejects.toThrow(/set PORT to a free port/);
    } finally {
      await closeServer(server);
    }
    await expect(assertPortFree(port, '127.0.0.1')).resolves.toBeUndefined();
  });
});
