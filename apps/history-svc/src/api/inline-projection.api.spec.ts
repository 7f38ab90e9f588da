import { PACED_APPEND_EVENTS } from '@udp/eventsourcing';
import { type Collection, type Document, MemoryReadModelStore, type ReadModelStore } from '@udp/readmodel';
import { startTestSystem, type TestSystem } from '@udp/test-system';
import { createHistoryService } from '../app';
import { TRENDING_COLLECTION } from '../projections/trending';

/**
 * Issue 28: in one process a user's entries and head are applied by the write itself (inline), so a write is answered
 * and readable at once whatever the asynchronous projector that keeps the trending counts is doing. Here that
 * projector is held (its first write to the counts waits for a gate) while users write: before, every write waited
 * for its event to pass through the one projector, so none was answered until the gate opened.
 */
const NOW = 1_700_000_000_000;
let system: TestSystem;
let release: () => void;
let held: Promise<void>;
let countsTouched: () => void;
let countsReached: Promise<void>;

/** The read models, except that writes to the trending counts wait for `release`. */
function holdingTheCounts(inner: ReadModelStore): ReadModelStore {
  const holding = <T extends Document>(collection: Collection<T>): Collection<T> => ({
    get: (id) => collection.get(id),
    getMany: (ids) => collection.getMany(ids),
    find: (filter, options) => collection.find(filter, options),
    prepareFind: (filter, options) => collection.prepareFind(filter, options),
    count: (filter) => collection.count(filter),
    async upsertIfNewer(doc) {
      countsTouched();
      await held;
      return collection.upsertIfNewer(doc);
    },
    async upsertManyIfNewer(docs) {
      countsTouched();
      await held;
      return collection.upsertManyIfNewer(docs);
    },
    updateMany: (filter, set) => collection.updateMany(filter, set),
    deleteMany: (filter) => collection.deleteMany(filter),
  });
  return {
    collection: <T extends Document>(name: string) =>
      name === TRENDING_COLLECTION ? holding(inner.collection<T>(name)) : inner.collection<T>(name),
    ensureIndex: (collection, keys, options) => inner.ensureIndex(collection, keys, options),
    checkpoints: () => inner.checkpoints(),
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
}

beforeEach(async () => {
  held = new Promise((resolve) => (release = resolve));
  countsReached = new Promise((resolve) => (countsTouched = resolve));
  system = await startTestSystem([
    {
      prefixes: ['/api/history'],
      // A minute: a write that waited for the held projector would outlast the test.
      create: (deps) => createHistoryService({ ...deps, now: () => NOW, readYourWritesTimeoutMs: 60_000 }),
      adapters: { readModels: holdingTheCounts(new MemoryReadModelStore()) },
    },
  ]);
});
afterEach(async () => {
  release();
  await system.stop();
});

const as = async (user: string) => {
  const token = await system.auth(user);
  return {
    post: (path: string, body: object) => system.http.post(path).set('authorization', token).send(body),
    get: (path: string) => system.http.get(path).set('authorization', token),
  };
};

it('answers writes and shows them at once while the trending projector is held', async () => {
  const alice = await as('alice');
  const bob = await as('bob');
  expect((await alice.post('/api/history/v2', { item_id: 'urn:a', date: NOW - 1 })).status).toBe(200);
  // The trending projector is now held on alice's event.
  await countsReached;
  expect(
    (
      await bob.post('/api/history/v2/batch', {
        data: [
          { item_id: 'urn:b', date: NOW - 2 },
          { item_id: 'urn:c', date: NOW - 1 },
        ],
      })
    ).status,
  ).toBe(204);
  expect((await alice.post('/api/history/v2', { item_id: 'urn:d', date: NOW })).status).toBe(200);

  expect((await bob.get('/api/history/v2')).body).toMatchObject({ total: 2, data: [{ item_id: 'urn:c' }, { item_id: 'urn:b' }] });
  expect((await alice.get('/api/history/v2')).body).toMatchObject({ total: 2, data: [{ item_id: 'urn:d' }, { item_id: 'urn:a' }] });
});

it('counts the writes for trending once the projector goes on', async () => {
  for (const user of ['u1', 'u2', 'u3'])
    expect((await (await as(user)).post('/api/history/v2', { item_id: 'urn:hit', date: NOW - 1 })).status).toBe(200);
  await countsReached;
  release();
  const counts = system.deps[0].readModels.collection<{ _id: string; users: number } & Document>(TRENDING_COLLECTION);
  let found: Array<{ users: number }> = [];
  for (let polls = 0; polls < 500 && found[0]?.users !== 3; polls++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    found = await counts.find({});
  }
  expect(found).toEqual([expect.objectContaining({ users: 3 })]);
});

it('answers a batch of PACED_APPEND_EVENTS entries or more once the trending projector has applied it too', async () => {
  const alice = await as('alice');
  const carol = await as('carol');
  expect((await alice.post('/api/history/v2', { item_id: 'urn:a', date: NOW - 1 })).status).toBe(200);
  await countsReached;
  // Carol brings a batch of work for the shared projector: she waits for it, and alice, meanwhile, does not.
  const data = Array.from({ length: PACED_APPEND_EVENTS }, (_, i) => ({ item_id: `urn:batch:${i}`, date: NOW - 10_000 + i }));
  let answered = false;
  const batch = carol.post('/api/history/v2/batch', { data }).then((res) => {
    answered = true;
    return res;
  });
  expect((await alice.post('/api/history/v2', { item_id: 'urn:d', date: NOW })).status).toBe(200);
  // Her entries are readable (inline), and her answer still waits for the held projector.
  let shown = 0;
  for (let polls = 0; polls < 500 && shown < PACED_APPEND_EVENTS; polls++) {
    shown = (await carol.get('/api/history/v2?limit=500')).body.data.length;
    if (shown < PACED_APPEND_EVENTS) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(shown).toBe(PACED_APPEND_EVENTS);
  expect(answered).toBe(false);
  release();
  expect((await batch).status).toBe(204);
});
