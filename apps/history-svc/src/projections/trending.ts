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
  position: number;
}

export interface TrendingOptions {
  now: () => number;
  windowMs: number;
}

export const trendingBucketOf = (date: number) => Math.floor(date / TRENDING_BUCKET_MS) * TRENDING_BUCKET_MS;
/** The oldest hour that counts at `now`; older hours are neither counted nor kept. */
export const trendingHorizon = (now: number, windowMs: number) => trendingBucketOf(now - windowMs);
const countId = (bucket: number, itemId: string) => `${bucket}/${itemId}`;

export function trendingCounts(readModels: ReadModelStore): Collection<TrendingCountDocument> {
  return readModels.collection<TrendingCountDocument>(TRENDING_COLLECTION);
}

type EntryState = Pick<HistoryEntryDocument, '_id' | 'item_id' | 'date' | 'deleted'>;

/**
 * The part of the history projection that keeps `trending_counts`. The projection calls it with an entry's state
 * before and after an event, *before* it writes the entry: if the process stops in between, the event is applied
 * again, finds the entry unchanged, computes the same change, and the counts' `position` says it was made already.
 */
export function trendingCounter(readModels: ReadModelStore, entries: Collection<HistoryEntryDocument>, options: TrendingOptions) {
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
  async function change(itemId: string, bucket: number, delta: { leaving?: EntryState; arriving?: EntryState }, position: number | null) {
    for (;;) {
      const stored = await counts.get(countId(bucket, itemId));
      if (stored && position !== null && stored.position >= position) return;
      const current = stored ?? { _id: countId(bucket, itemId), item_id: itemId, bucket, users: 0, date: 0, position: -1, revision: -1 };
      let { users, date } = current;
      if (delta.leaving) {
        users = Math.max(0, users - 1);
        if (delta.leaving.date >= date) date = await newestDate(itemId, bucket, delta.leaving._id);
      }
      if (delta.arriving) {
        users += 1;
        date = Math.max(date, delta.arriving.date);
      }
      const next = { ...current, users, date, revision: current.revision + 1, position: position ?? current.position };
      if (await counts.upsertIfNewer(next)) return;
    }
  }

  /** Drops the hours that left the window, once per hour. */
  async function prune(horizon: number): Promise<void> {
    if (horizon <= prunedBefore) return;
    await counts.deleteMany({ bucket: { $lt: horizon } });
    prunedBefore = horizon;
  }

  return {
    /** An entry changes from `before` to `after` (null: absent) by the event at `position`. */
    async entryChanged(before: EntryState | null, after: EntryState | null, position: number): Promise<void> {
      const horizon = trendingHorizon(options.now(), options.windowMs);
      await prune(horizon);
      const from = bucketOf(before, horizon);
      const to = bucketOf(after, horizon);
      const itemId = (after ?? before)!.item_id;
      if (from !== null && from === to) {
        // Same hour: the same user still counts; only the newest date may change.
        return change(itemId, from, { leaving: before!, arriving: after! }, position);
      }
      if (from !== null) await change(itemId, from, { leaving: before! }, position);
      if (to !== null) await change(itemId, to, { arriving: after! }, position);
    },

    /**
     * Takes a user's entries out of the counts (erasure, before they are deleted). Not an event: if the process
     * stops half-way and the erasure is done again, the entries already taken out are taken out again, so counts
     * can end too low (never below zero), never too high: an erased user never stays counted.
     */
    async entriesErased(erased: EntryState[]): Promise<void> {
      const horizon = trendingHorizon(options.now(), options.windowMs);
      for (const entry of erased) {
        const bucket = bucketOf(entry, horizon);
        if (bucket !== null) await change(entry.item_id, bucket, { leaving: entry }, null);
      }
    },
  };
}

export type TrendingCounter = ReturnType<typeof trendingCounter>;

/**
 * Builds the counts from the entries, once, for a read model that was projected before the counts existed (its
 * checkpoint is past the events the counts would need). The projector is not running yet.
 */
export async function buildTrendingCounts(
  readModels: ReadModelStore,
  entries: Collection<HistoryEntryDocument>,
  options: TrendingOptions & { projection: string },
): Promise<void> {
  const checkpoints = readModels.checkpoints();
  if ((await checkpoints.load(TRENDING_BUILT_CHECKPOINT)) !== null) return;
  const projected = await checkpoints.load(options.projection);
  if (projected !== null) {
    const horizon = trendingHorizon(options.now(), options.windowMs);
    const live = await entries.find({ deleted: false, date: { $gte: horizon } }, { readOnly: true });
    const byId = new Map<string, TrendingCountDocument>();
    for (const entry of live) {
      const bucket = trendingBucketOf(entry.date);
      const id = countId(bucket, entry.item_id);
      const count = byId.get(id) ?? {
        _id: id,
        item_id: entry.item_id,
        bucket,
        users: 0,
        date: 0,
        position: Number(projected),
        revision: 0,
      };
      count.users += 1;
      count.date = Math.max(count.date, entry.date);
      byId.set(id, count);
    }
    const counts = trendingCounts(readModels);
    for (const count of byId.values()) await counts.upsertIfNewer(count);
  }
  await checkpoints.save(TRENDING_BUILT_CHECKPOINT, projected ?? 0n);
}

/**
 * The most-watched items over the window, from the counts the projection keeps (a few documents per item and
 * hour of the window, whatever the number of history entries): an item's users are summed over its hours, each
 * user counting once since an entry is in one hour at a time. Ties: newest watch first, then item id.
 */
export async function trendingItems(counts: Collection<TrendingCountDocument>, query: TrendingQuery): Promise<TrendingItem[]> {
  const hours = await counts.find({ bucket: { $gte: trendingHorizon(query.now, query.windowMs) } }, { readOnly: true });
  const byItem = new Map<string, TrendingItem>();
  for (const hour of hours) {
    if (hour.users <= 0) continue;
    const item = byItem.get(hour.item_id);
    if (item) {
      item.users += hour.users;
      item.date = Math.max(item.date, hour.date);
    } else byItem.set(hour.item_id, { item_id: hour.item_id, users: hour.users, date: hour.date });
  }
  return [...byItem.values()]
    .filter((item) => item.users >= query.minUsers)
    .sort((a, b) => b.users - a.users || b.date - a.date || (a.item_id < b.item_id ? -1 : 1))
    .slice(0, query.limit);
}
