import { type Projection, aggregateProjection, userScopedId } from '@udp/eventsourcing';
import type { Collection, Document, ReadModelStore } from '@udp/readmodel';
import { type HistoryEvent, historyStreams } from '../domain/aggregate';
import { type CountedAt, type TrendingCounter, type TrendingOptions, letOthersRun, trendingCounter } from './trending';

/**
 * One document per (user, item): the entry as the API shows it, plus the stream revision of its last change,
 * which is also its position in the user's change order (`since=<sync_token>` selects by it).
 */
export interface HistoryEntryDocument {
  _id: string;
  userId: string;
  item_id: string;
  id: number;
  date: number;
  deleted: boolean;
  device_id?: string;
  last_playback_position?: number;
  revision: number;
}

/**
 * One document per user: the revision of the newest change applied to that user's entries. It is written
 * after the entries of the change, so a reader that sees it sees every entry up to it (a HistoryCleared
 * touches many entries, and MongoDB's updateMany is not atomic across them).
 */
export interface HistoryHeadDocument {
  _id: string;
  userId: string;
  revision: number;
  /**
   * The store's position of that change (a decimal string): unlike the revision, never the same for two states of
   * any history, even for a history erased and begun again, so it names the version of the user's entries.
   */
  position: string;
}

export const HISTORY_COLLECTION = 'history_entries';
export const HISTORY_HEADS_COLLECTION = 'history_heads';
export const entryDocumentId = (userId: string, itemId: string) => userScopedId(userId, itemId);

/** Every read-model document of a user (erasure deletes them). */
export const historyDocumentsOfUser = (userId: string) => [
  { collection: HISTORY_COLLECTION, filter: { userId } },
  { collection: HISTORY_HEADS_COLLECTION, filter: { userId } },
];

export function historyEntries(readModels: ReadModelStore): Collection<HistoryEntryDocument> {
  return readModels.collection<HistoryEntryDocument>(HISTORY_COLLECTION);
}

export function historyHeads(readModels: ReadModelStore): Collection<HistoryHeadDocument> {
  return readModels.collection<HistoryHeadDocument>(HISTORY_HEADS_COLLECTION);
}

export const HISTORY_PROJECTION = 'history-entries';
/** Entries erased per step (taken out of the trending counts, then deleted in one transaction). */
const ERASURE_PAGE = 100;

/** The projection's view of time and the trending window (the trending counts keep only the window's hours). */
export type HistoryProjectionOptions = TrendingOptions;

const DEFAULT_TRENDING: HistoryProjectionOptions = { now: () => Date.now(), windowMs: 7 * 24 * 3600 * 1000 };

/**
 * Keeps `history_entries`, `history_heads` and `trending_counts` up to date. Every write is conditional on the
 * stream revision (the counts: on the store position), so a replayed or duplicated event, or a second instance
 * applying the same event, changes nothing.
 */
export function historyProjection(readModels: ReadModelStore, options: HistoryProjectionOptions = DEFAULT_TRENDING): Projection {
  const entries = historyEntries(readModels);
  const heads = historyHeads(readModels);
  const trending = trendingCounter(readModels, entries, options);
  return aggregateProjection({
    name: HISTORY_PROJECTION,
    aggregate: historyStreams,
    async apply(event, { id: userId, revision, position, segment }) {
      const counted = { position: Number(position), key: segment === undefined ? 'all' : `s${segment}` };
      await applyToEntries(entries, trending, event, userId, { revision, counted });
      await heads.upsertIfNewer({ _id: userId, userId, revision, position: String(position) });
    },
  });
}

/**
 * Each change of an entry is counted for trending first, then written: an entry already at the event's revision
 * was counted already (see `trendingCounter`).
 */
async function applyToEntries(
  entries: Collection<HistoryEntryDocument>,
  trending: TrendingCounter,
  event: HistoryEvent,
  userId: string,
  { revision, counted: position }: { revision: number; counted: CountedAt },
): Promise<void> {
  switch (event.type) {
    case 'HistoryItemRecorded': {
      const { itemId, id, date, deleted, deviceId, lastPlaybackPosition } = event.data;
      const entry: HistoryEntryDocument = {
        _id: entryDocumentId(userId, itemId),
        userId,
        item_id: itemId,
        id,
        date,
        deleted,
        revision,
        ...(deviceId !== undefined && { device_id: deviceId }),
        ...(lastPlaybackPosition !== undefined && { last_playback_position: lastPlaybackPosition }),
      };
      const stored = await entries.get(entry._id);
      if (stored && stored.revision >= revision) return;
      await trending.entryChanged(stored, entry, position);
      await entries.upsertIfNewer(entry);
      return;
    }
    case 'HistoryItemDeleted': {
      const stored = await entries.get(entryDocumentId(userId, event.data.itemId));
      if (!stored || stored.revision >= revision) return;
      const tombstone = { ...stored, deleted: true, date: event.data.date, revision };
      await trending.entryChanged(stored, tombstone, position);
      await entries.upsertIfNewer(tombstone);
      return;
    }
    case 'HistoryCleared': {
      const filter = { userId, item_id: { $in: event.data.itemIds }, revision: { $lt: revision } };
      // The live ones among them, picked with a set: `$in` on the memory read model tests every id for every entry.
      const itemIds = new Set(event.data.itemIds);
      const live = await entries.find({ userId, revision: { $lt: revision }, deleted: false }, { readOnly: true });
      for (const [i, stored] of live.filter((entry) => itemIds.has(entry.item_id)).entries()) {
        await trending.entryChanged(stored, { ...stored, deleted: true, date: event.data.date }, position);
        if (i % 1000 === 999) await letOthersRun();
      }
      await entries.updateMany(filter, { deleted: true, date: event.data.date, revision });
      return;
    }
  }
}

/**
 * The read models as the erasure participant sees them: deleting history entries first takes them out of the
 * trending counts (erasure deletes a user's entries with `deleteMany`; nothing else deletes entries).
 */
export function erasingTrendingToo(readModels: ReadModelStore, options: HistoryProjectionOptions = DEFAULT_TRENDING): ReadModelStore {
  const entries = historyEntries(readModels);
  const trending = trendingCounter(readModels, entries, options);
  const erasingEntries: Collection<HistoryEntryDocument> = {
    get: (id) => entries.get(id),
    find: (filter, findOptions) => entries.find(filter, findOptions),
    count: (filter) => entries.count(filter),
    upsertIfNewer: (doc) => entries.upsertIfNewer(doc),
    updateMany: (filter, set) => entries.updateMany(filter, set),
    async deleteMany(filter) {
      // Page by page, each taken out of the counts and then deleted, with other requests let in between: an erasure
      // of 100,000 entries neither holds the event loop nor parses every entry at once. Deleted entries too: an
      // hour an earlier delete left at zero still names the item.
      let deleted = 0;
      for (;;) {
        const page = await entries.find(filter, { limit: ERASURE_PAGE, readOnly: true });
        if (page.length === 0) return deleted;
        await trending.entriesErased(page);
        const gone = await entries.deleteMany({ _id: { $in: page.map((entry) => entry._id) } });
        // Nothing deleted would find the same page again for ever; the filter then names what cannot be deleted.
        if (gone === 0) throw new Error('history entries found for erasure could not be deleted');
        deleted += gone;
        await letOthersRun();
      }
    },
  };
  return {
    collection: <T extends Document>(name: string) =>
      (name === HISTORY_COLLECTION ? erasingEntries : readModels.collection<T>(name)) as unknown as Collection<T>,
    ensureIndex: (collection, keys, options) => readModels.ensureIndex(collection, keys, options),
    checkpoints: () => readModels.checkpoints(),
    caughtUp: async () => readModels.caughtUp?.(),
    scrub: async () => readModels.scrub?.(),
    ping: () => readModels.ping(),
    close: () => readModels.close(),
  };
}
