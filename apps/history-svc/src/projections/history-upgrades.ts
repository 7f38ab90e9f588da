import type { Collection, ReadModelStore } from '@udp/readmodel';
import { timeSlices } from '@udp/retry';
import {
  DEFAULT_TRENDING,
  type HistoryEntryDocument,
  HISTORY_PROJECTION,
  HISTORY_TRENDING_PROJECTION,
  type HistoryProjectionOptions,
  historyEntries,
  historyHeads,
  trendingWatches,
  withAnswer,
} from './history';
import {
  TRENDING_BUILT_CHECKPOINT,
  type TrendingCountDocument,
  type TrendingOptions,
  countId,
  resumItem,
  trendingBucketOf,
  trendingCounts,
  trendingHorizon,
} from './trending';

/* Read models written by earlier builds brought up to date, once, at start before any projector runs. */

/**
 * Copies the live entries of the window into `trending_watches`, once, for read models that were projected by the
 * single history projection (entries and counts together) before the counts had a projection of their own: the
 * trending projection then goes on from the entries' checkpoint. Before any projector runs.
 */
export async function buildTrendingWatches(
  readModels: ReadModelStore,
  options: HistoryProjectionOptions = DEFAULT_TRENDING,
): Promise<void> {
  const checkpoints = readModels.checkpoints();
  if ((await checkpoints.load(HISTORY_TRENDING_PROJECTION)) !== null) return;
  const projected = await checkpoints.load(HISTORY_PROJECTION);
  // A new file: the trending projector applies every event.
  if (projected === null) return;
  const horizon = trendingHorizon(options.now(), options.windowMs);
  const live = await historyEntries(readModels).find({ deleted: false, date: { $gte: horizon } }, { readOnly: true });
  const watches = trendingWatches(readModels);
  for (const entry of live) {
    await watches.upsertIfNewer({
      _id: entry._id,
      userId: entry.userId,
      item_id: entry.item_id,
      date: entry.date,
      deleted: false,
      revision: entry.revision,
    });
  }
  await checkpoints.save(HISTORY_TRENDING_PROJECTION, projected);
}

/** Marks read models whose entries all hold their answer (a checkpoint of this name, never a position). */
const ANSWERS_FILLED = 'history-entries-answers';

/**
 * Adds its answer to every entry written before entries kept one (a read-model file of an earlier version), user by
 * user, once; the next starts find the mark. Before any projector runs. Idempotent: each write is conditional on the
 * entry's revision, so an entry changed meanwhile (another instance) keeps the answer its change made.
 */
export async function fillEntryAnswers(readModels: ReadModelStore): Promise<number> {
  const checkpoints = readModels.checkpoints();
  if ((await checkpoints.load(ANSWERS_FILLED)) !== null) return 0;
  const entries = historyEntries(readModels);
  let filled = 0;
  const { slice } = timeSlices();
  for (const { userId } of await historyHeads(readModels).find({}, { readOnly: true })) {
    for (const stored of await entries.find({ userId, answer: null }, { readOnly: true })) {
      filled += await entries.updateMany({ _id: stored._id, revision: stored.revision }, { answer: withAnswer(stored).answer });
      await slice();
    }
  }
  await checkpoints.save(ANSWERS_FILLED, 0n);
  return filled;
}

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
    for (const itemId of new Set(live.map((entry) => entry.item_id))) await resumItem(readModels, itemId, horizon);
  }
  await checkpoints.save(TRENDING_BUILT_CHECKPOINT, projected ?? 0n);
}
