import { randomUUID } from 'node:crypto';
import { MemoryEventStore } from '@udp/eventstore';
import { createLogger } from '@udp/telemetry';
import { legacyPreferenceStreamId, preferenceStreamId } from '../domain/events';
import { migrateLegacyPreferenceStreams } from './legacy-streams';

const logger = createLogger('test', 'silent');
const written = (key: string, n: number) => ({
  id: randomUUID(),
  type: 'PreferenceWritten',
  data: { key, document: { n }, operation: { kind: 'replace' } },
});

describe('rewriting the former preference streams', () => {
  it('puts each event in the stream of its writer, once, even when two instances run it at the same time', async () => {
    const store = new MemoryEventStore();
    const shared = legacyPreferenceStreamId('u', 'ab>settings');
    await store.appendToStream(shared, [written('ab>settings', 1), written('settings', 2), written('ab>settings', 3)], {
      expectedRevision: 'no_stream',
    });

    const reports = await Promise.all([migrateLegacyPreferenceStreams(store, logger), migrateLegacyPreferenceStreams(store, logger)]);

    expect(reports.reduce((sum, r) => sum + r.written, 0)).toBe(2);
    const u = await store.readStream(preferenceStreamId('u', 'ab>settings'));
    const v = await store.readStream(preferenceStreamId('u-YWI', 'settings'));
    expect(u.events.map((e) => e.data.document)).toEqual([{ n: 1 }, { n: 3 }]);
    expect(v.events.map((e) => e.data.document)).toEqual([{ n: 2 }]);
    expect(v.events[0].metadata).toMatchObject({
      owner: { userId: 'u-YWI', key: 'settings' },
      migratedFrom: { streamId: shared, revision: 1 },
    });
    expect((await store.readStream(shared)).revision).toBe(-1);
    expect(await migrateLegacyPreferenceStreams(store, logger)).toEqual({ streams: 0, written: 0, kept: 0 });
  });

  it('keeps a former stream holding an event it cannot attribute, and still copies the others', async () => {
    const store = new MemoryEventStore();
    const stream = legacyPreferenceStreamId('alice', 'player');
    await store.appendToStream(stream, [written('player', 1), written('other', 2)], { expectedRevision: 'no_stream' });
    expect(await migrateLegacyPreferenceStreams(store, logger)).toEqual({ streams: 1, written: 1, kept: 1 });
    expect((await store.readStream(stream)).events).toHaveLength(2);
    expect((await store.readStream(preferenceStreamId('alice', 'player'))).events).toHaveLength(1);
  });
});
