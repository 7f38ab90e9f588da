import { MongoReadModelStore } from '@udp/readmodel';
import { describeWithMongo } from '@udp/test-kit';
import { log, randomHistory, scanned } from '../testing/trending-histories';
import { oneCallAtATime } from '../testing/one-call-at-a-time';
import { HISTORY_COLLECTION, historyEntries, historyProjection } from '../projections/history';
import { erasingTrendingToo } from '../projections/history-erasure';
import { trendingIndexes } from '../projections/trending';
import { trendingItems } from '../projections/trending-queries';

/**
 * The trending counts on MongoDB (CI: FerretDB on loopback through MONGO_URL; else a MongoDB testcontainer where
 * Docker runs; else skipped, saying so): the same answer as a scan of the entries, after a replay, two projections
 * applying the same events at once, and an erasure.
 */
const DAY = 24 * 3600 * 1000;
const now = 1000 * DAY + 17 * 60 * 1000;

const options = { now: () => now, windowMs: 7 * DAY };
const query = { now, windowMs: 7 * DAY, minUsers: 1, limit: 100 };

/** A database of its own with the indexes the distributed mode's trending uses. */
async function readModelsWithIndexes(connection: string, database: string) {
  const readModels = await MongoReadModelStore.connect(connection, database);
  await readModels.ensureIndex(HISTORY_COLLECTION, { userId: 1, date: -1, item_id: 1 });
  await readModels.ensureIndex(HISTORY_COLLECTION, { item_id: 1, date: -1 });
  await trendingIndexes(readModels);
  return readModels;
}

describeWithMongo('trending counts on mongodb', (connection) => {
  it('answers what a scan of the entries answers, after a replay, two replicas, and an erasure', async () => {
    const readModels = await readModelsWithIndexes(connection(), `udp_trending_${process.pid}_${Date.now()}`);
    try {
      const events = log(randomHistory(3, 150, now));
      // The two replicas' calls one at a time: FerretDB's conditional writes are not atomic (oneCallAtATime).
      const racing = oneCallAtATime(readModels);
      const one = historyProjection(racing, options);
      const two = historyProjection(racing, options);
      await Promise.all([
        (async () => {
          for (const event of events) await one.apply(event);
        })(),
        (async () => {
          for (const event of events) await two.apply(event);
        })(),
      ]);
      for (const event of events) await one.apply(event);
      const expected = () =>
        historyEntries(readModels)
          .find({})
          .then((entries) => scanned(entries, query));
      const answer = await trendingItems(readModels, query);
      expect(answer.length).toBeGreaterThan(0);
      expect(answer).toEqual(await expected());

      await erasingTrendingToo(readModels, options).collection(HISTORY_COLLECTION).deleteMany({ userId: 'u1' });
      expect(await trendingItems(readModels, query)).toEqual(await expected());
    } finally {
      await readModels.close();
    }
  }, 120_000);

  it('answers the same when two replicas apply the same events at once as batches (bulk writes, compare-and-set lost)', async () => {
    const readModels = await readModelsWithIndexes(connection(), `udp_trending_batch_${process.pid}_${Date.now()}`);
    try {
      // Dates over three hours: many users' watches of an item share an hour, and the replicas its count.
      const events = log(randomHistory(4, 300, now, 3 * 3600 * 1000));
      // The two replicas' calls one at a time: FerretDB's conditional writes are not atomic (oneCallAtATime). They
      // still interleave between calls: each one's reads go stale and its compare-and-sets are lost to the other.
      const racing = oneCallAtATime(readModels);
      const inBatches = async (size: number) => {
        const projection = historyProjection(racing, options);
        for (let at = 0; at < events.length; at += size) await projection.applyBatch!(events.slice(at, at + size));
      };
      await Promise.all([inBatches(7), inBatches(16)]);
      const answer = await trendingItems(readModels, query);
      expect(answer.length).toBeGreaterThan(3);
      expect(answer).toEqual(await scanned(await historyEntries(readModels).find({}), query));
    } finally {
      await readModels.close();
    }
  }, 120_000);
});
