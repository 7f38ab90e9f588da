import type { RecordedEvent } from '@udp/eventstore';
import { MemoryReadModelStore } from '@udp/readmodel';
import { deleted, recorded } from '../testing/history-events';
import { log, randomHistory, scanned } from '../testing/trending-histories';
import {
  HISTORY_COLLECTION,
  HISTORY_PROJECTION,
  HISTORY_TRENDING_PROJECTION,
  TRENDING_WATCHES_COLLECTION,
  historyDocumentsOfUser,
  historyEntries,
  historyOwnRowsProjection,
  historyProjection,
  historyTrendingProjection,
} from './history';
import {
  TRENDING_BUCKET_MS,
  TRENDING_BUILT_CHECKPOINT,
  type TrendingQuery,
  trendingCounts,
  trendingIndexes,
  trendingItemTotals,
} from './trending';
import { erasingTrendingToo } from './history-erasure';
import { buildTrendingCounts, buildTrendingWatches } from './history-upgrades';
import { trendingItems } from './trending-queries';

const HOUR = TRENDING_BUCKET_MS;
const DAY = 24 * HOUR;
const WINDOW = 7 * DAY;
const now = 1000 * DAY + 17 * 60 * 1000; // 17 minutes into an hour

/** The read models with the indexes history-svc declares (the answer's fast path reads the sorted index). */
async function setup() {
  const readModels = new MemoryReadModelStore();
  await readModels.ensureIndex(HISTORY_COLLECTION, { userId: 1, date: -1, item_id: 1 });
  await readModels.ensureIndex(HISTORY_COLLECTION, { item_id: 1, date: -1 });
  await trendingIndexes(readModels);
  const options = { now: () => now, windowMs: WINDOW };
  const projection = historyProjection(readModels, options);
  const query = { now, windowMs: WINDOW, minUsers: 2, limit: 100 };
  return {
    readModels,
    options,
    projection,
    apply: async (events: RecordedEvent[]) => {
      for (const event of events) await projection.apply(event);
    },
    answer: (q: Partial<TrendingQuery> = {}) => trendingItems(readModels, { ...query, ...q }),
    expected: async (q: Partial<TrendingQuery> = {}) => scanned(await historyEntries(readModels).find({}), { ...query, ...q }),
  };
}

describe('trending counts', () => {
  it('answer what a scan of the entries answers: most users first, only items with at least minUsers users in the window', async () => {
    const t = await setup();
    await t.apply(
      log([
        ['a', recorded('urn:hit', 1, now - DAY)],
        ['b', recorded('urn:hit', 1, now - 2 * DAY)],
        ['c', recorded('urn:hit', 1, now - 3 * DAY)],
        ['a', recorded('urn:two', 2, now - DAY)],
        ['b', recorded('urn:two', 2, now - DAY + 5)],
        ['a', recorded('urn:alone', 3, now - 1000)],
        ['a', recorded('urn:old', 4, now - 30 * DAY)],
        ['b', recorded('urn:old', 3, now - 30 * DAY)],
        ['c', recorded('urn:old', 2, now - 30 * DAY)],
        ['a', recorded('urn:forgotten', 5, now - DAY)],
        ['b', recorded('urn:forgotten', 4, now - DAY)],
        ['b', deleted('urn:forgotten', 4, now - 10)],
      ]),
    );
    expect(await t.answer()).toEqual([
      { item_id: 'urn:hit', users: 3, date: now - DAY },
      { item_id: 'urn:two', users: 2, date: now - DAY + 5 },
    ]);
    expect(await t.answer({ minUsers: 3 })).toEqual([{ item_id: 'urn:hit', users: 3, date: now - DAY }]);
    expect(await t.answer({ limit: 1 })).toHaveLength(1);
  });

  it('follow an entry from hour to hour, and find the newest watch again when the newest one leaves', async () => {
    const t = await setup();
    await t.apply(
      log([
        ['a', recorded('urn:x', 1, now - 2 * DAY + 10)],
        ['b', recorded('urn:x', 1, now - 2 * DAY + 20)],
        ['c', recorded('urn:x', 1, now - 2 * DAY + 30)],
        ['c', deleted('urn:x', 1, now - 2)], // the newest leaves: b's is the newest again
        ['a', recorded('urn:x', 1, now - 5)], // a moves to the last hour
      ]),
    );
    expect(await t.answer()).toEqual([{ item_id: 'urn:x', users: 2, date: now - 5 }]);
    expect(await t.answer()).toEqual(await t.expected());
  });

  it.each([1, 2, 3, 4, 5])(
    'match the scan on random histories, applied once, twice, and by two projections at once (seed %i)',
    async (seed) => {
      const events = log(randomHistory(seed, 400, now));
      const once = await setup();
      await once.apply(events);
      expect(await once.answer()).toEqual(await once.expected());
      expect((await once.answer()).length).toBeGreaterThan(0);
      // A short list (the answer stops early), and days later with no event since (sums stale, redone at query time).
      for (const q of [{ limit: 3 }, { limit: 3, minUsers: 1 }, { now: now + 2 * DAY }, { now: now + 2 * DAY, limit: 2, minUsers: 1 }]) {
        expect(await once.answer(q)).toEqual(await once.expected(q));
      }

      // Every event twice, then the whole log again (a replay from an old checkpoint): nothing changes.
      const twice = await setup();
      for (const event of events) {
        await twice.projection.apply(event);
        await twice.projection.apply(event);
      }
      await twice.apply(events);
      expect(await twice.answer()).toEqual(await once.answer());

      // Two replicas on one read model, each applying every event, interleaved at every await.
      const shared = await setup();
      const other = historyProjection(shared.readModels, shared.options);
      await Promise.all([
        shared.apply(events),
        (async () => {
          for (const e of events) await other.apply(e);
        })(),
      ]);
      expect(await shared.answer()).toEqual(await once.answer());
    },
  );

  it('are applied again after a stop between the counts and the entry (the entry is written last)', async () => {
    const t = await setup();
    const [first, second] = log([
      ['a', recorded('urn:x', 1, now - DAY)],
      ['a', recorded('urn:x', 1, now - 10)],
    ]);
    await t.apply([first]);
    // The second event's counts were written, then the process stopped before the entry: simulate by restoring it.
    const before = (await historyEntries(t.readModels).get('a/urn:x'))!;
    await t.apply([second]);
    await historyEntries(t.readModels).deleteMany({ userId: 'a' });
    await historyEntries(t.readModels).upsertIfNewer(before);
    await t.apply([second]);
    expect(await t.answer({ minUsers: 1 })).toEqual([{ item_id: 'urn:x', users: 1, date: now - 10 }]);
  });

  it('lose an erased user: the erasure deletes the entries through erasingTrendingToo', async () => {
    const t = await setup();
    const events = log(randomHistory(7, 400, now));
    await t.apply(events);
    const before = await t.answer({ minUsers: 1 });
    const erasing = erasingTrendingToo(t.readModels, t.options).collection(HISTORY_COLLECTION);
    for (const user of ['u1', 'u2', 'u3']) await erasing.deleteMany({ userId: user });
    const after = await t.answer({ minUsers: 1 });
    expect(after).toEqual(await t.expected({ minUsers: 1 }));
    expect(after).not.toEqual(before);
  });

  it('follow the window as time passes: hours that left it are dropped, their items summed again', async () => {
    const clock = { now };
    const readModels = new MemoryReadModelStore();
    await trendingIndexes(readModels);
    const projection = historyProjection(readModels, { now: () => clock.now, windowMs: WINDOW });
    const events = log([
      ['a', recorded('urn:x', 1, now - 6 * DAY)],
      ['b', recorded('urn:x', 1, now - 6 * DAY)],
      ['c', recorded('urn:x', 1, now - DAY)],
      ['a', recorded('urn:y', 2, now - 6 * DAY)],
      ['d', recorded('urn:z', 1, now)],
    ]);
    for (const event of events.slice(0, 4)) await projection.apply(event);
    clock.now = now + 2 * DAY;
    const query = { now: clock.now, windowMs: WINDOW, minUsers: 1, limit: 10 };
    // Before any event in the new hour: the stale sums are summed at query time.
    expect(await trendingItems(readModels, query)).toEqual([{ item_id: 'urn:x', users: 1, date: now - DAY }]);
    await projection.apply(events[4]);
    expect(await trendingItems(readModels, query)).toEqual([
      { item_id: 'urn:z', users: 1, date: now },
      { item_id: 'urn:x', users: 1, date: now - DAY },
    ]);
    expect((await trendingCounts(readModels).find({})).map((c) => c.item_id).sort()).toEqual(['urn:x', 'urn:z']);
    expect((await trendingItemTotals(readModels).find({})).map((i) => [i.item_id, i.users]).sort()).toEqual([
      ['urn:x', 1],
      ['urn:z', 1],
    ]);
  });

  it('keep only the hours of the window', async () => {
    const t = await setup();
    await t.apply(
      log([
        ['a', recorded('urn:x', 1, now - 10 * DAY)],
        ['b', recorded('urn:x', 1, now - DAY)],
      ]),
    );
    const counts = await trendingCounts(t.readModels).find({});
    expect(counts.map((c) => c.bucket)).toEqual([Math.floor((now - DAY) / HOUR) * HOUR]);
  });

  it('are built from the entries once, for a read model projected before they existed', async () => {
    const t = await setup();
    await t.apply(log(randomHistory(11, 300, now)));
    const answer = await t.answer();
    const checkpoints = t.readModels.checkpoints();
    await checkpoints.save(HISTORY_PROJECTION, 300n);
    await trendingCounts(t.readModels).deleteMany({});
    await buildTrendingCounts(t.readModels, historyEntries(t.readModels), { ...t.options, projection: HISTORY_PROJECTION });
    expect(await t.answer()).toEqual(answer);
    expect(await checkpoints.load(TRENDING_BUILT_CHECKPOINT)).toBe(300n);
  });
});

describe('trending counts with segments (replicas applying their segments side by side)', () => {
  it('count an event of one segment applied after a later event of another, and a replay within a segment once', async () => {
    // Given three users' watches of one item in one hour, stored in this order
    const t = await setup();
    const [first, second, third] = log([
      ['a', recorded('urn:shared', 1, now - HOUR)],
      ['b', recorded('urn:shared', 1, now - HOUR + 5)],
      ['c', recorded('urn:shared', 1, now - HOUR + 9)],
    ]);
    // When the replica of segment 2 applies b's and c's before the replica of segment 1 applies a's (it was behind),
    // and segment 2's events are applied again after a takeover
    await t.projection.apply(second, { segment: 2 });
    await t.projection.apply(third, { segment: 2 });
    await t.projection.apply(first, { segment: 1 });
    await t.projection.apply(second, { segment: 2 });
    await t.projection.apply(third, { segment: 2 });

    // Then every user counts, once
    expect(await t.answer({ minUsers: 1 })).toEqual(await t.expected({ minUsers: 1 }));
    expect((await t.answer({ minUsers: 1 }))[0]).toMatchObject({ item_id: 'urn:shared', users: 3 });
  });
});

describe('the trending counts by their own projection (one process: entries applied inline)', () => {
  /** The entries' projection and the counts' projection, each over every event, as InlineProjector and a Projector apply them. */
  async function split(readModels: MemoryReadModelStore, events: RecordedEvent[], options: { now: () => number; windowMs: number }) {
    const own = historyOwnRowsProjection(readModels);
    const counts = historyTrendingProjection(readModels, options);
    for (const event of events) await own.apply(event);
    for (const event of events) await counts.apply(event);
  }
  const countsOf = async (readModels: MemoryReadModelStore) =>
    (await trendingCounts(readModels).find({}))
      .map(({ _id, users, date }) => ({ _id, users, date }))
      .sort((a, b) => (a._id < b._id ? -1 : 1));

  it.each([1, 2, 3, 4])('count what the single projection counts, the answer too (random history, seed %i)', async (seed) => {
    const events = log(randomHistory(seed, 400, now));
    const single = await setup();
    await single.apply(events);
    const inline = await setup();
    await split(inline.readModels, events, inline.options);
    expect(await countsOf(inline.readModels)).toEqual(await countsOf(single.readModels));
    expect(await inline.answer()).toEqual(await single.expected());
  });

  it('go on from read models the single projection made: the watches built from the entries at its checkpoint', async () => {
    const events = log(randomHistory(7, 400, now));
    const single = await setup();
    await single.apply(events);
    const t = await setup();
    await t.apply(events.slice(0, 200));
    await t.readModels.checkpoints().save(HISTORY_PROJECTION, events[199].position);
    await buildTrendingWatches(t.readModels, t.options);
    expect(await t.readModels.checkpoints().load(HISTORY_TRENDING_PROJECTION)).toBe(events[199].position);
    await split(t.readModels, events.slice(200), t.options);
    expect(await countsOf(t.readModels)).toEqual(await countsOf(single.readModels));
  });

  it('lose an erased user: the erasure deletes the watches through erasingTrendingToo', async () => {
    const t = await setup();
    await split(
      t.readModels,
      log([
        ['a', recorded('urn:hit', 1, now - DAY)],
        ['b', recorded('urn:hit', 1, now - DAY)],
        ['c', recorded('urn:hit', 1, now - DAY)],
      ]),
      t.options,
    );
    expect(await t.answer({ minUsers: 3 })).toEqual([{ item_id: 'urn:hit', users: 3, date: now - DAY }]);
    const erasing = erasingTrendingToo(t.readModels, t.options, TRENDING_WATCHES_COLLECTION);
    for (const { collection, filter } of historyDocumentsOfUser('c')) await erasing.collection(collection).deleteMany(filter);
    expect(await t.answer({ minUsers: 2 })).toEqual([{ item_id: 'urn:hit', users: 2, date: now - DAY }]);
    expect(await historyEntries(t.readModels).find({ userId: 'c' })).toEqual([]);
  });
});
