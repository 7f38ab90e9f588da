import { mkdtempSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { InProcessBus } from '@udp/bus';
import { commonConfigSchema, loadConfig } from '@udp/config';
import { closeAdapters, openAdapters } from './adapters';
import { closeServer, listen } from './server';

describe('openAdapters', () => {
  it('chooses the embedded adapters when no server is configured, with files under DATA_DIR', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'udp-runtime-'));
    const shared = { bus: new InProcessBus() };
    const adapters = await openAdapters(loadConfig(commonConfigSchema, { DATA_DIR: dir }), 'demo-svc', shared);
    expect(adapters.describe).toEqual({ eventStore: 'sqlite', readModels: 'memory', bus: 'in-process' });
    expect(adapters.bus).toBe(shared.bus);
    expect(existsSync(join(dir, 'demo-svc', 'events.sqlite'))).toBe(true);
    expect(existsSync(join(dir, 'secrets', 'internal-identity.key'))).toBe(true);
    await closeAdapters(adapters, shared);
  });
});

describe('listen', () => {
  it('binds the port the OS picks when PORT is 0', async () => {
    const { server, port } = await listen(express(), 0, '127.0.0.1');
    expect(port).toBeGreaterThan(0);
    await closeServer(server);
  });
});
