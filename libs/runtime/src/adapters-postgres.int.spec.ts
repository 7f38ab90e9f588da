import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { InProcessBus } from '@udp/bus';
import { commonConfigSchema, loadConfig } from '@udp/config';
import { PostgresEventStore } from '@udp/eventstore';
import { reportSkipped } from '@udp/test-kit';
import { closeAdapters, isPostgresUrl, openAdapters } from './adapters';

describe('EVENTSTORE_URL picks the event store by its scheme', () => {
  it('postgres:// and postgresql:// are PostgreSQL; kurrentdb:// and esdb:// KurrentDB', () => {
    expect(['postgres://u@h/db', 'postgresql://h:5432/db', ' POSTGRES://h/db'].map(isPostgresUrl)).toEqual([true, true, true]);
    expect(['kurrentdb://h:2113?tls=false', 'esdb://h:2113', 'kurrentdb+discover://h', 'postgresx://h'].map(isPostgresUrl)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
});

/** With a server (POSTGRES_URL, tools/servers/with-servers.sh): a service's adapters on it. */
const url = process.env.POSTGRES_URL;
if (!url) {
  reportSkipped('openAdapters on PostgreSQL', 'POSTGRES_URL is unset (tools/servers/with-servers.sh sets it)');
} else {
  describe('openAdapters on PostgreSQL', () => {
    it('opens the PostgreSQL event store for EVENTSTORE_URL=postgres://..., which appends and reads', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'udp-runtime-pg-'));
      const shared = { bus: new InProcessBus() };
      const adapters = await openAdapters(loadConfig(commonConfigSchema, { DATA_DIR: dir, EVENTSTORE_URL: url }), 'demo-svc', shared);
      try {
        expect(adapters.describe).toEqual({ eventStore: 'postgresql', readModels: 'memory', bus: 'in-process' });
        expect(adapters.store).toBeInstanceOf(PostgresEventStore);
        const stream = `demo-${randomUUID()}`;
        await adapters.store.appendToStream(stream, [{ id: randomUUID(), type: 'A', data: { n: 1 } }], { expectedRevision: 'no_stream' });
        expect((await adapters.store.readStream(stream)).events.map((e) => e.data)).toEqual([{ n: 1 }]);
        expect(await adapters.store.ping()).toBe(true);
      } finally {
        await closeAdapters(adapters, shared);
      }
    });

    it('opens the PostgreSQL read models for READMODEL_URL=postgres://..., in a schema of the service, shared by segments', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'udp-runtime-pg-'));
      const shared = { bus: new InProcessBus() };
      const prefix = `rt${randomUUID().replace(/-/g, '').slice(0, 10)}`;
      const config = loadConfig(commonConfigSchema, { DATA_DIR: dir, EVENTSTORE_URL: url, READMODEL_URL: url, MONGO_DB_PREFIX: prefix });
      const adapters = await openAdapters(config, 'demo-svc', shared);
      try {
        expect(adapters.describe).toEqual({ eventStore: 'postgresql', readModels: 'postgresql', bus: 'in-process' });
        expect(adapters.segments?.count).toBe(config.PROJECTION_SEGMENTS);
        const notes = adapters.readModels.collection<{ _id: string; userId: string; revision: number }>('notes');
        expect(await notes.upsertIfNewer({ _id: 'u1/a', userId: 'u1', revision: 1 })).toBe(true);
        expect(await notes.find({ userId: 'u1' })).toEqual([{ _id: 'u1/a', userId: 'u1', revision: 1 }]);
        await adapters.readModels.checkpoints().save('demo', 7n);
        expect(await adapters.readModels.checkpoints().load('demo')).toBe(7n);
        expect(await adapters.readModels.ping()).toBe(true);
      } finally {
        await closeAdapters(adapters, shared);
        const { Client } = require('pg') as typeof import('pg');
        const client = new Client({ connectionString: url });
        await client.connect();
        // The service's schema: the prefix and the service's name, as MONGO_DB_PREFIX names MongoDB's databases.
        const { rows } = await client.query(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1`, [
          `${prefix}_demo_svc`,
        ]);
        await client.query(`DROP SCHEMA IF EXISTS "${prefix}_demo_svc" CASCADE`);
        await client.end();
        expect(rows[0].n).toBeGreaterThanOrEqual(2);
      }
    });
  });
}

describe('READMODEL_URL', () => {
  it('takes a PostgreSQL or MongoDB URL, and nothing else', () => {
    expect(loadConfig(commonConfigSchema, { READMODEL_URL: ' postgresql://h/db ' }).READMODEL_URL).toBe('postgresql://h/db');
    expect(loadConfig(commonConfigSchema, { READMODEL_URL: 'mongodb://h' }).READMODEL_URL).toBe('mongodb://h');
    expect(() => loadConfig(commonConfigSchema, { READMODEL_URL: 'kurrentdb://h' })).toThrow(/READMODEL_URL/);
  });
});
