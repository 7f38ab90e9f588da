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
  });
}
