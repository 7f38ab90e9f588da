import { MemoryEventStore, MemorySnapshotStore } from '@udp/eventstore';
import { given } from '@udp/test-kit';
import { startTestSystem } from '@udp/test-system';
import { createHistoryService } from '../app';
import { historyStream } from '../domain/aggregate';
import { historySnapshot } from '../domain/snapshot';

/** Bounded replay: a history is saved every N events and at a clean stop; a new instance reads only what is newer. */
describe('history snapshots', () => {
  const store = new MemoryEventStore();
  const snapshots = new MemorySnapshotStore();
  const start = () =>
    startTestSystem([
      {
        prefixes: ['/api/history'],
        adapters: { store },
        create: (deps) => createHistoryService({ ...deps, snapshots, snapshotEvery: 50 }),
      },
    ]);
  const readFrom: Array<number | undefined> = [];
  const readStream = store.readStream.bind(store);
  store.readStream = (id, options) => {
    readFrom.push(options?.fromRevision);
    return readStream(id, options);
  };

  const nothing = () => undefined;

  it('saves every 50 events and at stop; a restarted service starts from the snapshot and answers as before', async () => {
    const stream = historyStream('alice').id;
    const first = await start();
    const alice = await first.auth('alice');
    const batch = { data: Array.from({ length: 120 }, (_, i) => ({ item_id: `urn:${i}`, date: 1000 + i })) };

    await given(nothing)
      .when(() => first.http.post('/api/history/v2/batch').set('authorization', alice).send(batch))
      .then(async (res) => {
        expect(res.status).toBe(204);
        expect(await snapshots.read(stream)).toMatchObject({ version: historySnapshot.version, revision: 119 });
      });
    await given(nothing)
      .when(() => first.http.post('/api/history/v2').set('authorization', alice).send({ item_id: 'urn:0', date: 5000 }))
      .then(async () => expect((await snapshots.read(stream))?.revision).toBe(119));
    await given(nothing)
      .when(() => first.stop())
      .then(async () => expect((await snapshots.read(stream))?.revision).toBe(120));

    const second = await start();
    // urn:0 keeps its technical id: the decision was taken on the saved state.
    await given(() => {
      readFrom.length = 0;
    })
      .when(async () =>
        second.http
          .post('/api/history/v2')
          .set('authorization', await second.auth('alice'))
          .send({ item_id: 'urn:new', date: 6000 }),
      )
      .then((res) => {
        expect(res.body).toMatchObject({ item_id: 'urn:new', id: 121 });
        expect(readFrom).toEqual([120]);
      });
    await given(nothing)
      .when(async () =>
        second.http
          .post('/api/history/v2')
          .set('authorization', await second.auth('alice'))
          .send({ item_id: 'urn:0', date: 7000 }),
      )
      .then((again) => expect(again.body).toMatchObject({ item_id: 'urn:0', id: 1 }));
    await second.stop();
  });
});
