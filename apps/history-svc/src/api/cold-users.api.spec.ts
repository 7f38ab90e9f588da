import { MemoryEventStore } from '@udp/eventstore';
import { given } from '@udp/test-kit';
import { startTestSystem, type TestSystem } from '@udp/test-system';
import { createHistoryService } from '../app';
import { historyStream } from '../domain/aggregate';

/**
 * A user in no cache (most of an audience) writes from their own rows: the entries are the state, the head names the
 * revision they show, and only the events after it are read. One history is kept in memory here, so every other
 * user's write is cold.
 */
describe('a cold user writes from their rows', () => {
  let store: MemoryEventStore;
  let system: TestSystem;
  const readFrom: Array<{ streamId: string; from: number | undefined }> = [];

  beforeEach(async () => {
    store = new MemoryEventStore();
    const readStream = store.readStream.bind(store);
    store.readStream = (streamId, options) => {
      readFrom.push({ streamId, from: options?.fromRevision });
      return readStream(streamId, options);
    };
    system = await startTestSystem([
      {
        prefixes: ['/api/history'],
        adapters: { store },
        create: (deps) => createHistoryService({ ...deps, cachedHistories: 1, maxEntries: 31 }),
      },
    ]);
  });
  afterEach(() => system.stop());

  const post = (token: string, body: object) => system.http.post('/api/history/v2').set('authorization', token).send(body);
  /** Alice's history of 30 entries (one deleted, one with a device and a position), then bob's write evicts it. */
  const aliceThenBob = async () => {
    const alice = await system.auth('alice');
    const batch = { data: Array.from({ length: 30 }, (_, i) => ({ item_id: `urn:${i}`, date: 1000 + i })) };
    expect((await system.http.post('/api/history/v2/batch').set('authorization', alice).send(batch)).status).toBe(204);
    expect((await post(alice, { item_id: 'urn:7', date: 2000, device_id: 'tv', last_playback_position: 42 })).status).toBe(200);
    expect((await system.http.delete('/api/history/v2/urn:3').set('authorization', alice)).status).toBe(204);
    expect((await post(await system.auth('bob'), { item_id: 'urn:bob', date: 1 })).status).toBe(200);
    readFrom.length = 0;
    return alice;
  };
  const aliceReads = () => readFrom.filter((r) => r.streamId === historyStream('alice').id).map((r) => r.from);

  it('reads only the events from the head its rows show, and decides as the whole stream would', async () => {
    await given(aliceThenBob)
      .when((token) => post(token, { item_id: 'urn:new', date: 3000 }))
      .then((res) => {
        // Entries 1-30 took ids 1-30: the next is 31, from the rows' highest id.
        expect(res.body).toMatchObject({ item_id: 'urn:new', id: 31 });
        // The head is at revision 31 (30 recorded, one update, one delete): that event alone is read, to check it.
        expect(aliceReads()).toEqual([31]);
      });
    // Evicted again: an older date for urn:7 changes nothing, and keeps its device and position.
    await post(await system.auth('bob'), { item_id: 'urn:bob2', date: 1 });
    const kept = await post(await system.auth('alice'), { item_id: 'urn:7', date: 1500 });
    expect(kept.body).toMatchObject({ item_id: 'urn:7', id: 8, date: 2000, device_id: 'tv', last_playback_position: 42 });
  });

  it('counts every entry, tombstones too, against the quota', async () => {
    await given(aliceThenBob)
      .when(async (token) => {
        expect((await post(token, { item_id: 'urn:31st', date: 3000 })).status).toBe(200);
        await post(await system.auth('bob'), { item_id: 'urn:bob2', date: 1 });
        return post(token, { item_id: 'urn:32nd', date: 3001 });
      })
      .then((res) => {
        expect(res.status).toBe(422);
        expect(aliceReads()).toEqual([31, 32]);
      });
  });

  it('a deleted entry written again keeps its id; a delete of it by id finds it', async () => {
    await given(aliceThenBob)
      .when(async (token) => {
        const again = await post(token, { item_id: 'urn:3', date: 9_000_000_000_000 });
        await post(await system.auth('bob'), { item_id: 'urn:bob2', date: 1 });
        const byId = await system.http.delete('/api/history/4').set('authorization', token);
        return { again, byId };
      })
      .then(({ again, byId }) => {
        expect(again.body).toMatchObject({ item_id: 'urn:3', id: 4, deleted: false });
        expect(byId.status).toBe(204);
      });
  });
});
