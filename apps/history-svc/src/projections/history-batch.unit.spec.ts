import type { ApplyContext, Projection } from '@udp/eventsourcing';
import type { RecordedEvent } from '@udp/eventstore';
import { type Collection, type Document, MemoryReadModelStore, type ReadModelStore } from '@udp/readmodel';
import { log, randomHistory } from '../testing/trending-histories';
import {
  HISTORY_COLLECTION,
  HISTORY_HEADS_COLLECTION,
  TRENDING_WATCHES_COLLECTION,
  historyProjection,
  historyTrendingProjection,
} from './history';
import { TRENDING_BUCKET_MS, TRENDING_COLLECTION, TRENDING_ITEMS_COLLECTION, trendingIndexes } from './trending';
import { trendingItems } from './trending-queries';

const HOUR = TRENDING_BUCKET_MS;
const DAY = 24 * HOUR;
const WINDOW = 7 * DAY;
const now = 1000 * DAY + 17 * 60 * 1000;
const options = { now: () => now, windowMs: WINDOW };
const query = { now, windowMs: WINDOW, minUsers: 1, limit: 50 };

/** The read models with history-svc's indexes (the newest watch of an hour is found by one). */
async function readModelsWithIndexes() {
  const readModels = new MemoryReadModelStore();
  await readModels.ensureIndex(HISTORY_COLLECTION, { userId: 1, date: -1, item_id: 1 });
  await readModels.ensureIndex(HISTORY_COLLECTION, { item_id: 1, date: -1 });
  await readModels.ensureIndex(HISTORY_HEADS_COLLECTION, { userId: 1 });
  await readModels.ensureIndex(TRENDING_WATCHES_COLLECTION, { item_id: 1, date: -1 });
  await readModels.ensureIndex(TRENDING_WATCHES_COLLECTION, { userId: 1 });
  await trendingIndexes(readModels);
  return readModels;
}

/**
 * Every collection's documents by id. A count's and a total's `revision` is a write counter (a batch writes each once,
 * one at a time writes it per event), so it is left out; everything else, the counts' guard positions included, must
 * be the same.
 */
function contents(readModels: MemoryReadModelStore) {
  const writeCounters = new Set([TRENDING_COLLECTION, TRENDING_ITEMS_COLLECTION]);
  return Object.fromEntries(
    [...readModels.image().collections].map(([name, documents]) => [
      name,
      [...documents]
        .map((doc) => (writeCounters.has(name) ? { ...doc, revision: undefined } : doc))
        .sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0)),
    ]),
  );
}

/** Each user's events in a segment of their own among four, as a distributed projector tells them. */
const contextOf = (event: RecordedEvent): ApplyContext => ({ segment: Number(/u(\d+)/.exec(event.streamId)![1]) % 4 });

/** Batches of 1 to 40 events, their sizes from the seed. */
function batchesOf(events: RecordedEvent[], seed: number): RecordedEvent[][] {
  const batches: RecordedEvent[][] = [];
  for (let at = 0, n = seed; at < events.length; n = (n * 1103515245 + 12345) % 2 ** 31) {
    const size = 1 + (n % 40);
    batches.push(events.slice(at, at + size));
    at += size;
  }
  return batches;
}

const applyBatch = (projection: Projection, batch: RecordedEvent[]) => projection.applyBatch!(batch, batch.map(contextOf));

async function oneByOne(events: RecordedEvent[]) {
  const readModels = await readModelsWithIndexes();
  const projection = historyProjection(readModels, options);
  for (const event of events) await projection.apply(event, contextOf(event));
  return readModels;
}

/** The read models with one collection's bulk write failing once, after writing the first half of its documents. */
function failingOnce(readModels: ReadModelStore, collection: string): ReadModelStore & { armed: boolean } {
  const store = Object.create(readModels) as ReadModelStore & { armed: boolean };
  store.armed = true;
  store.collection = <T extends Document>(name: string): Collection<T> => {
    const inner = readModels.collection<T>(name);
    if (name !== collection) return inner;
    return Object.assign(Object.create(inner) as Collection<T>, {
      upsertManyIfNewer: async (docs: Parameters<Collection<T>['upsertManyIfNewer']>[0]) => {
        if (!store.armed || docs.length < 2) return inner.upsertManyIfNewer(docs);
        store.armed = false;
        await inner.upsertManyIfNewer(docs.slice(0, docs.length >> 1));
        throw new Error('stopped between writes');
      },
    });
  };
  return store;
}

/**
 * The batches applied in order to one set of read models; every `every`-th batch with `collection`'s bulk write failing
 * once half-way (a process stopped there), then applied again whole. Answers the read models and how many stopped.
 */
async function appliedWithStops(
  batches: RecordedEvent[][],
  collection: string,
  every: number,
  apply: (readModels: ReadModelStore, batch: RecordedEvent[]) => Promise<void>,
) {
  const memory = await readModelsWithIndexes();
  let stops = 0;
  for (const [i, batch] of batches.entries()) {
    try {
      await apply(i % every === 0 ? failingOnce(memory, collection) : memory, batch);
    } catch (error) {
      expect((error as Error).message).toBe('stopped between writes');
      stops++;
      await apply(memory, batch);
    }
  }
  return { memory, stops };
}

describe('history projection: the events in hand applied as one batch (distributed mode)', () => {
  it.each([
    [1, 9 * DAY],
    [2, 3 * HOUR],
    [3, 2 * HOUR],
    [4, 9 * DAY],
  ])('leaves every collection and the trending answer as one event at a time does (seed %i, dates over %i ms)', async (seed, spread) => {
    const events = log(randomHistory(seed, 800, now, spread));
    const reference = await oneByOne(events);
    const readModels = await readModelsWithIndexes();
    const projection = historyProjection(readModels, options);
    for (const batch of batchesOf(events, seed)) await applyBatch(projection, batch);
    expect(contents(readModels)).toEqual(contents(reference));
    expect(await trendingItems(readModels, query)).toEqual(await trendingItems(reference, query));
    expect((await trendingItems(reference, query)).length).toBeGreaterThan(3);
  });

  it('a batch applied again, or older batches after newer ones, changes nothing', async () => {
    const events = log(randomHistory(5, 600, now, 3 * HOUR));
    const reference = await oneByOne(events);
    const readModels = await readModelsWithIndexes();
    const projection = historyProjection(readModels, options);
    const batches = batchesOf(events, 5);
    for (const batch of batches) {
      await applyBatch(projection, batch);
      await applyBatch(projection, batch);
    }
    for (const batch of [...batches].reverse()) await applyBatch(projection, batch);
    expect(contents(readModels)).toEqual(contents(reference));
  });

  it.each([HISTORY_COLLECTION, HISTORY_HEADS_COLLECTION, TRENDING_COLLECTION, TRENDING_ITEMS_COLLECTION])(
    'a batch stopped half-way through its writes to %s and applied again counts nothing twice',
    async (collection) => {
      const events = log(randomHistory(6, 600, now, 2 * HOUR));
      const reference = await oneByOne(events);
      // Every fifth batch fails once, as a projector whose process stopped there, and is applied again whole.
      const { memory, stops } = await appliedWithStops(batchesOf(events, 6), collection, 5, (readModels, batch) =>
        applyBatch(historyProjection(readModels, options), batch),
      );
      expect(stops).toBeGreaterThan(3);
      expect(contents(memory)).toEqual(contents(reference));
    },
  );
});

describe('trending projection of one process: the events in hand applied as one batch (embedded mode)', () => {
  async function trendingOneByOne(events: RecordedEvent[]) {
    const readModels = await readModelsWithIndexes();
    const projection = historyTrendingProjection(readModels, options);
    for (const event of events) await projection.apply(event);
    return readModels;
  }

  it.each([
    [11, 9 * DAY],
    [12, 3 * HOUR],
    [13, 2 * HOUR],
  ])('leaves the watches, the counts and the answer as one event at a time does (seed %i, dates over %i ms)', async (seed, spread) => {
    const events = log(randomHistory(seed, 800, now, spread));
    const reference = await trendingOneByOne(events);
    const readModels = await readModelsWithIndexes();
    const projection = historyTrendingProjection(readModels, options);
    for (const batch of batchesOf(events, seed)) await projection.applyBatch!(batch);
    expect(contents(readModels)).toEqual(contents(reference));
    expect(await trendingItems(readModels, query)).toEqual(await trendingItems(reference, query));
    expect((await trendingItems(reference, query)).length).toBeGreaterThan(3);
  });

  it.each([TRENDING_WATCHES_COLLECTION, TRENDING_COLLECTION, TRENDING_ITEMS_COLLECTION])(
    'a batch stopped half-way through its writes to %s and applied again counts nothing twice',
    async (collection) => {
      const events = log(randomHistory(14, 600, now, 2 * HOUR));
      const reference = await trendingOneByOne(events);
      // Every other batch fails once (a batch with a clear goes one event at a time, with no bulk write to fail).
      const { memory, stops } = await appliedWithStops(batchesOf(events, 14), collection, 2, (readModels, batch) =>
        historyTrendingProjection(readModels, options).applyBatch!(batch),
      );
      expect(stops).toBeGreaterThan(2);
      expect(contents(memory)).toEqual(contents(reference));
    },
  );
});
