import { timeSlices } from '@udp/retry';
import type { Collection, ReadModelStore, VersionedDocument } from '@udp/readmodel';
import type { HistoryEntryDocument } from './history';

export interface TrendingItem {
  item_id: string;
  /** Distinct users who watched the item in the window. */
  users: number;
  /** Newest watch of the item in the window (ms). */
  date: number;
}

export interface TrendingQuery {
  now: number;
  windowMs: number;
  /** An item is listed only when at least this many distinct users watched it, so no one's viewing shows. */
  minUsers: number;
  limit: number;
}

/** Counts are kept per item and hour: the window starts at the start of the hour that `now - window` falls in. */
export const TRENDING_BUCKET_MS = 3600 * 1000;
export const TRENDING_COLLECTION = 'trending_counts';
export const TRENDING_ITEMS_COLLECTION = 'trending_items';
/** The checkpoint that says the counts were built (from the entries, or by the projection from the first event). */
export const TRENDING_BUILT_CHECKPOINT = 'history-trending-counts';

/**
 * The live entries of one item whose `date` falls in one hour: how many (each is one user, the entries being one
 * per user and item) and the newest `date` among them. `revision` is a write counter (every change goes through a
 * compare-and-set on it, so two writers never lose each other's change); `position` is the store position of the
 * last event applied, so an event applied again (replay, a second replica) changes nothing.
 */
export interface TrendingCountDocument extends VersionedDocument {
  item_id: string;
  /** Start of the hour (ms). */
  bucket: number;
  users: number;
  date: number;
  /** Up to which store position every event was counted (kept as it was once `positions` exists). */
  position: number;
  /**
   * The store position of the last event counted, per guard key: the segment the event came from (`s<n>`), or
   * `all` without segments. Replicas apply their segments side by side, so events reach a count in store order
   * within a segment only; one position for all would skip an event of one segment applied after a later one of
   * another.
   */
  positions?: Record<string, number>;
}

/** An event as a count sees it: its store position and the key its order holds within. */
export interface CountedAt {
  position: number;
  key: string;
}

/**
 * One item's users over the window, summed from its hours each time one of them changes, so the answer reads the
 * most-watched items in order and stops at the limit. `oldest` is the first hour in the sum: once the window has
 * moved past it, the sum is stale (too high) until summed again, and the query sums such an item itself.
 */
export interface TrendingItemDocument extends VersionedDocument {
  /** The same for every item, so that one index orders them all (the memory adapter indexes by a first key). */
  kind: 'item';
  item_id: string;
  users: number;
  date: number;
  oldest: number;
}

export interface TrendingOptions {
  now: () => number;
  windowMs: number;
}

export const trendingBucketOf = (date: number) => Math.floor(date / TRENDING_BUCKET_MS) * TRENDING_BUCKET_MS;
/** The oldest hour that counts at `now`; older hours are neither counted nor kept. */
export const trendingHorizon = (now: number, windowMs: number) => trendingBucketOf(now - windowMs);
export const countId = (bucket: number, itemId: string) => `${bucket}/${itemId}`;

export function trendingCounts(readModels: ReadModelStore): Collection<TrendingCountDocument> {
  return readModels.collection<TrendingCountDocument>(TRENDING_COLLECTION);
}

export function trendingItemTotals(readModels: ReadModelStore): Collection<TrendingItemDocument> {
  return readModels.collection<TrendingItemDocument>(TRENDING_ITEMS_COLLECTION);
}

/** Declares the indexes the counts and the answer use. */
export async function trendingIndexes(readModels: ReadModelStore): Promise<void> {
  // The projection reads the counts as it applies each event.
  const queriedByProjection = { queriedByProjection: true };
  await readModels.ensureIndex(TRENDING_COLLECTION, { item_id: 1, bucket: 1 }, queriedByProjection);
  await readModels.ensureIndex(TRENDING_COLLECTION, { bucket: 1 }, queriedByProjection);
  await readModels.ensureIndex(TRENDING_ITEMS_COLLECTION, { kind: 1, users: -1, date: -1, item_id: 1 }, queriedByProjection);
  await readModels.ensureIndex(TRENDING_ITEMS_COLLECTION, { kind: 1, oldest: 1 }, queriedByProjection);
}

/** An item's users and newest watch over the hours from `horizon` on. */
export async function sumOfHours(counts: Collection<TrendingCountDocument>, itemId: string, horizon: number) {
  return sumOf(await counts.find({ item_id: itemId, bucket: { $gte: horizon } }, { readOnly: true }));
}

/** The users and newest watch of one item's hours (those in the window). */
function sumOf(hours: Iterable<TrendingCountDocument>) {
  let users = 0;
  let date = 0;
  let oldest = Number.MAX_SAFE_INTEGER;
  for (const hour of hours) {
    if (hour.users <= 0) continue;
    users += hour.users;
    date = Math.max(date, hour.date);
    oldest = Math.min(oldest, hour.bucket);
  }
  return { users, date, oldest };
}

/**
 * Sums an item's hours again and stores the total: absolute, so doing it twice or late is harmless; by
 * compare-and-set, so the last writer has read the hours after every change that preceded its write.
 */
export async function resumItem(readModels: ReadModelStore, itemId: string, horizon: number): Promise<void> {
  const totals = trendingItemTotals(readModels);
  for (;;) {
    const stored = await totals.get(itemId);
    const sum = await sumOfHours(trendingCounts(readModels), itemId, horizon);
    // Nobody counts it: the total goes (by compare-and-set too), instead of a total of zero deleted later.
    if (sum.users === 0) {
      if (!stored || (await totals.deleteMany({ _id: itemId, revision: stored.revision })) === 1) return;
      continue;
    }
    const next: TrendingItemDocument = { _id: itemId, kind: 'item', item_id: itemId, ...sum, revision: (stored?.revision ?? -1) + 1 };
    if (await totals.upsertIfNewer(next)) return;
  }
}

type EntryState = Pick<HistoryEntryDocument, '_id' | 'item_id' | 'date' | 'deleted'>;

/** An entry changed from `before` to `after` (null: absent) by the event at `at`. */
export interface EntryChange {
  before: EntryState | null;
  after: EntryState | null;
  at: CountedAt;
}

/** What one event does to one hour's count: an entry leaves it, arrives in it, or both (it stays, its date changes). */
interface CountStep {
  leaving?: EntryState;
  arriving?: EntryState;
  at: CountedAt;
}

/**
 * The part of the history projection that keeps `trending_counts` and `trending_items`. The projection calls it with an entry's state
 * before and after an event, *before* it writes the entry: if the process stops in between, the event is applied
 * again, finds the entry unchanged, computes the same change, and the counts' `position` says it was made already.
 */
export function trendingCounter<W extends EntryState>(readModels: ReadModelStore, entries: Collection<W>, options: TrendingOptions) {
  const counts = trendingCounts(readModels);
  let prunedBefore = 0;

  /** The hour an entry counts in, or null (deleted, or older than the window). */
  const bucketOf = (entry: EntryState | null, horizon: number) =>
    entry && !entry.deleted && trendingBucketOf(entry.date) >= horizon ? trendingBucketOf(entry.date) : null;

  /** Newest live entry of the item in the hour, leaving out `exclude` (the entry that is leaving it). */
  async function newestDate(itemId: string, bucket: number, exclude: string): Promise<number> {
    const [newest] = await entries.find(
      { item_id: itemId, date: { $gte: bucket, $lt: bucket + TRENDING_BUCKET_MS }, deleted: false, _id: { $ne: exclude } },
      { sort: { date: -1 }, limit: 1, readOnly: true },
    );
    return newest?.date ?? 0;
  }

  /**
   * One counter's change, by compare-and-set on its write counter: re-read and redone when another writer got in
   * first. `position` null: not an event (erasure), applied whatever the counter's position.
   */
  async function change(itemId: string, bucket: number, delta: { leaving?: EntryState; arriving?: EntryState }, at: CountedAt | null) {
    for (;;) {
      const stored = await counts.get(countId(bucket, itemId));
      if (stored && at !== null && Math.max(stored.position, stored.positions?.[at.key] ?? -1) >= at.position) return;
      const current = stored ?? { _id: countId(bucket, itemId), item_id: itemId, bucket, users: 0, date: 0, position: -1, revision: -1 };
      let { users, date } = current;
      if (delta.leaving) {
        users = Math.max(0, users - 1);
        // With nobody left the hour has no newest watch (a sum skips it): no need to look for one.
        if (users === 0) date = 0;
        else if (delta.leaving.date >= date) date = await newestDate(itemId, bucket, delta.leaving._id);
      }
      if (delta.arriving) {
        users += 1;
        date = Math.max(date, delta.arriving.date);
      }
      // An erasure (no event, so no position to keep) deletes an hour nobody counts any more, by compare-and-set.
      if (at === null && users === 0) {
        if (!stored || (await counts.deleteMany({ _id: current._id, revision: current.revision })) === 1) return;
        continue;
      }
      const positions = at === null ? current.positions : { ...current.positions, [at.key]: at.position };
      const next = { ...current, users, date, revision: current.revision + 1, ...(positions && { positions }) };
      if (await counts.upsertIfNewer(next)) return;
    }
  }

  /** Once per hour: drops the hours that left the window and sums the items that counted them again. */
  async function prune(horizon: number): Promise<void> {
    if (horizon <= prunedBefore) return;
    await counts.deleteMany({ bucket: { $lt: horizon } });
    const stale = await trendingItemTotals(readModels).find({ kind: 'item', oldest: { $lt: horizon } }, { readOnly: true });
    for (const item of stale) await resumItem(readModels, item.item_id, horizon);
    await trendingItemTotals(readModels).deleteMany({ kind: 'item', users: 0 });
    prunedBefore = horizon;
  }

  /**
   * The items' totals summed again together, read once for all (as a batch's are), and the hours and totals of theirs
   * that nobody counts any more deleted (an erased user's item ids must not stay in them). Summed item by item, and
   * each collection's zeros deleted by all the page's ids, a page of 100 items cost 700-900 ms of round trips on
   * FerretDB, three quarters of an erasure's time there; the zeros are now found among what is read anyway.
   */
  const forgetItems = async (itemIds: string[], horizon: number) => {
    // The totals read before the hours, as `resumItem` reads them. Every hour of the items: a zero one may have left
    // the window and not been pruned yet.
    const totals = trendingItemTotals(readModels);
    const stored = new Map((await totals.getMany(itemIds)).map((total) => [total._id, total]));
    const hours = new Map<string, TrendingCountDocument>();
    const zeros: string[] = [];
    for (const hour of await counts.find({ item_id: { $in: itemIds } }, { readOnly: true })) {
      if (hour.users <= 0) zeros.push(hour._id);
      else if (hour.bucket >= horizon) hours.set(hour._id, hour);
    }
    // Still zero when deleted: an hour counted again meanwhile stays.
    if (zeros.length > 0) await counts.deleteMany({ _id: { $in: zeros }, users: 0 });
    // Deletes the totals that sum to zero, by compare-and-set.
    await resumItems(itemIds, horizon, stored, hours);
  };

  /** The hours an entry's change leaves and enters: one step when it stays in the same hour. */
  const stepsOf = ({ before, after, at }: EntryChange, horizon: number) => {
    const from = bucketOf(before, horizon);
    const to = bucketOf(after, horizon);
    const itemId = (after ?? before)!.item_id;
    if (from !== null && from === to) return [{ itemId, bucket: from, step: { leaving: before!, arriving: after!, at } }];
    return [
      ...(from !== null ? [{ itemId, bucket: from, step: { leaving: before!, at } }] : []),
      ...(to !== null ? [{ itemId, bucket: to, step: { arriving: after!, at } }] : []),
    ];
  };

  /**
   * One hour's count after a batch's steps, each applied in order as `change` applies it (its guard, then the users
   * and newest date); null when every step was counted already. A leaving entry that held the newest date makes the
   * hour look for it again, once, after all the steps: among the stored entries the batch leaves as they were, and
   * the batch's own entries as they end (`entries` still holds them as they were before the batch).
   */
  async function countAfter(
    stored: TrendingCountDocument | undefined,
    itemId: string,
    bucket: number,
    steps: CountStep[],
    horizon: number,
    batchEntries: Map<string, { itemId: string; state: EntryState | null }>,
  ): Promise<TrendingCountDocument | null> {
    const current = stored ?? { _id: countId(bucket, itemId), item_id: itemId, bucket, users: 0, date: 0, position: -1, revision: -1 };
    let { users, date } = current;
    let positions = current.positions;
    let newestLeft = false;
    let counted = false;
    for (const { leaving, arriving, at } of steps) {
      if (Math.max(current.position, positions?.[at.key] ?? -1) >= at.position) continue;
      counted = true;
      if (leaving) {
        users = Math.max(0, users - 1);
        if (users === 0) [date, newestLeft] = [0, false];
        else if (leaving.date >= date) newestLeft = true;
      }
      if (arriving) {
        users += 1;
        date = Math.max(date, arriving.date);
      }
      positions = { ...positions, [at.key]: at.position };
    }
    if (!counted) return null;
    if (newestLeft) {
      const own = [...batchEntries].filter(([, entry]) => entry.itemId === itemId);
      const mine = new Set(own.map(([id]) => id));
      const stale = await entries.find(
        { item_id: itemId, date: { $gte: bucket, $lt: bucket + TRENDING_BUCKET_MS }, deleted: false },
        { sort: { date: -1 }, limit: mine.size + 1, readOnly: true },
      );
      date = stale.find((entry) => !mine.has(entry._id))?.date ?? 0;
      for (const [, { state }] of own) if (bucketOf(state, horizon) === bucket) date = Math.max(date, state!.date);
    }
    return { ...current, users, date, revision: current.revision + 1, ...(positions && { positions }) };
  }

  /**
   * The items' totals summed again from their hours, by compare-and-set as `resumItem` does (the totals read before the
   * hours), for many items at once: `stored` and `hours` were read in that order, `hours` with the batch's own changes.
   */
  async function resumItems(
    itemIds: string[],
    horizon: number,
    stored: Map<string, TrendingItemDocument>,
    hours: Map<string, TrendingCountDocument>,
  ): Promise<void> {
    const totals = trendingItemTotals(readModels);
    for (let pending = itemIds; pending.length > 0;) {
      const hoursOf = new Map<string, TrendingCountDocument[]>(pending.map((itemId) => [itemId, []]));
      for (const hour of hours.values()) hoursOf.get(hour.item_id)?.push(hour);
      const writes: TrendingItemDocument[] = [];
      const lost: string[] = [];
      for (const itemId of pending) {
        const sum = sumOf(hoursOf.get(itemId)!);
        const total = stored.get(itemId);
        if (sum.users > 0) writes.push({ _id: itemId, kind: 'item', item_id: itemId, ...sum, revision: (total?.revision ?? -1) + 1 });
        else if (total && (await totals.deleteMany({ _id: itemId, revision: total.revision })) !== 1) lost.push(itemId);
      }
      const written = await totals.upsertManyIfNewer(writes);
      lost.push(...writes.filter((_, i) => !written[i]).map((total) => total.item_id));
      pending = lost;
      if (pending.length === 0) return;
      // Another writer got in first: these totals and hours read again, in that order.
      for (const itemId of pending) stored.delete(itemId);
      for (const total of await totals.getMany(pending)) stored.set(total._id, total);
      for (const [id, hour] of hours) if (pending.includes(hour.item_id)) hours.delete(id);
      for (const hour of await counts.find({ item_id: { $in: pending }, bucket: { $gte: horizon } }, { readOnly: true }))
        hours.set(hour._id, hour);
    }
  }

  return {
    /**
     * A batch's changes of entries, counted as `entryChanged` counts them one by one, with the counts read and written
     * once for all: the items' totals, then all their hours in the window, read in one call each; each changed hour's
     * steps applied in order under its guard and the hours written in one bulk write (again, re-read, for any that
     * another writer changed meanwhile); then the totals summed and written in one. Before the batch's entries are
     * written (`entries` holds them as they were), so a stop in between applies the batch again to the same entries,
     * and the hours' guards say which steps were counted.
     */
    async entriesChanged(changes: EntryChange[]): Promise<void> {
      const horizon = trendingHorizon(options.now(), options.windowMs);
      await prune(horizon);
      const steps = new Map<string, { itemId: string; bucket: number; steps: CountStep[] }>();
      const batchEntries = new Map<string, { itemId: string; state: EntryState | null }>();
      for (const change of changes) {
        const { _id, item_id: itemId } = (change.after ?? change.before)!;
        batchEntries.set(_id, { itemId, state: change.after });
        for (const { itemId, bucket, step } of stepsOf(change, horizon)) {
          const id = countId(bucket, itemId);
          if (!steps.has(id)) steps.set(id, { itemId, bucket, steps: [] });
          steps.get(id)!.steps.push(step);
        }
      }
      const itemIds = [...new Set([...steps.values()].map((hour) => hour.itemId))];
      if (itemIds.length === 0) return;
      const stored = new Map((await trendingItemTotals(readModels).getMany(itemIds)).map((total) => [total._id, total]));
      const hours = new Map(
        (await counts.find({ item_id: { $in: itemIds }, bucket: { $gte: horizon } }, { readOnly: true })).map((hour) => [hour._id, hour]),
      );
      for (let pending = [...steps.keys()]; pending.length > 0;) {
        const next: TrendingCountDocument[] = [];
        for (const id of pending) {
          const { itemId, bucket, steps: hourSteps } = steps.get(id)!;
          const count = await countAfter(hours.get(id), itemId, bucket, hourSteps, horizon, batchEntries);
          if (count) next.push(count);
        }
        const written = await counts.upsertManyIfNewer(next);
        for (const [i, count] of next.entries()) if (written[i]) hours.set(count._id, count);
        pending = next.filter((_, i) => !written[i]).map((count) => count._id);
        // Changed by another writer meanwhile: read again, the steps applied to what it wrote.
        for (const id of pending) hours.delete(id);
        for (const hour of pending.length ? await counts.getMany(pending) : []) hours.set(hour._id, hour);
      }
      await resumItems(itemIds, horizon, stored, hours);
    },

    /** An entry changes from `before` to `after` (null: absent) by the event at `position` (with its guard key). */
    async entryChanged(before: EntryState | null, after: EntryState | null, position: CountedAt): Promise<void> {
      const horizon = trendingHorizon(options.now(), options.windowMs);
      await prune(horizon);
      const from = bucketOf(before, horizon);
      const to = bucketOf(after, horizon);
      const itemId = (after ?? before)!.item_id;
      if (from !== null && from === to) {
        // Same hour: the same user still counts; only the newest date may change.
        await change(itemId, from, { leaving: before!, arriving: after! }, position);
      } else {
        if (from !== null) await change(itemId, from, { leaving: before! }, position);
        if (to !== null) await change(itemId, to, { arriving: after! }, position);
      }
      // Also when the hours had been changed already (a stop before this point): the entry is written after it.
      if (from !== null || to !== null) await resumItem(readModels, itemId, horizon);
    },

    /**
     * Takes a user's entries out of the counts (erasure, before they are deleted). Not an event: if the process
     * stops half-way and the erasure is done again, the entries already taken out are taken out again, so counts
     * can end too low (never below zero), never too high: an erased user never stays counted.
     */
    async entriesErased(erased: EntryState[]): Promise<void> {
      const horizon = trendingHorizon(options.now(), options.windowMs);
      const { slice } = timeSlices();
      const items = new Set<string>();
      for (const entry of erased) {
        const bucket = bucketOf(entry, horizon);
        if (bucket !== null) await change(entry.item_id, bucket, { leaving: entry }, null);
        items.add(entry.item_id);
        await slice();
      }
      await forgetItems([...items], horizon);
    },

    /**
     * The hours, then the items, of `itemIds` that nobody counts any more are deleted (also those an earlier delete of
     * an entry left at zero): an item id can be personal data (an erased user's own upload), and no document may keep
     * it after the erasure. For the items of an erased user's deleted entries too, which count nowhere any more.
     */
    async itemsErased(itemIds: string[]): Promise<void> {
      await forgetItems(itemIds, trendingHorizon(options.now(), options.windowMs));
    },
  };
}

export type TrendingCounter = ReturnType<typeof trendingCounter>;
