import { type Collection, type Document, type ReadModelStore, withCollections } from '@udp/readmodel';
import { timeSlices } from '@udp/retry';
import {
  DEFAULT_TRENDING,
  HISTORY_COLLECTION,
  type HistoryEntryDocument,
  type HistoryProjectionOptions,
  TRENDING_WATCHES_COLLECTION,
  historyEntries,
} from './history';
import { trendingCounter } from './trending';

/* How a user's history documents are erased: page by page, each page taken out of the trending counts first. */

/** Entries erased per step (taken out of the trending counts, then deleted in one transaction), embedded. */
const ERASURE_PAGE = 100;
/**
 * The same on a networked store (the distributed mode): its work is on the server, not on the event loop, and a page
 * costs a few round trips whatever its size, so pages 10 times larger (50,000 entries on PostgreSQL: 500 pages of 100
 * took 12.7 s).
 */
export const NETWORKED_ERASURE_PAGE = 10 * ERASURE_PAGE;

/**
 * A collection whose `deleteMany` deletes page by page, each page handed to `beforeDelete` first (taken out of the
 * trending counts), with other requests let in between: an erasure of 100,000 entries neither holds the event loop
 * nor parses every entry at once.
 */
function pagedErasure<D extends HistoryEntryDocument>(
  documents: Collection<D>,
  beforeDelete?: (page: D[]) => Promise<void>,
  page = ERASURE_PAGE,
): Collection<D> {
  // Pages of `page` when each is taken out of the counts, five times larger when only deleted.
  const pageSize = beforeDelete ? page : 5 * page;
  return {
    get: (id) => documents.get(id),
    getMany: (ids) => documents.getMany(ids),
    find: (filter, findOptions) => documents.find(filter, findOptions),
    prepareFind: (filter, findOptions) => documents.prepareFind(filter, findOptions),
    count: (filter) => documents.count(filter),
    upsertIfNewer: (doc) => documents.upsertIfNewer(doc),
    upsertManyIfNewer: (docs) => documents.upsertManyIfNewer(docs),
    updateMany: (filter, set) => documents.updateMany(filter, set),
    async deleteMany(filter) {
      // Deleted entries too: an hour an earlier delete left at zero still names the item.
      let deleted = 0;
      // Others go between every two pages (each is a few milliseconds of work): slicing pages by time held other users
      // longer beside a 100,000-entry erasure (their p99 66 -> 91-97 ms).
      const { slice } = timeSlices(0);
      for (;;) {
        const page = await documents.find(filter, { limit: pageSize, readOnly: true });
        if (page.length === 0) return deleted;
        await beforeDelete?.(page);
        const gone = await documents.deleteMany({ _id: { $in: page.map((entry) => entry._id) } });
        // Nothing deleted would find the same page again for ever; the filter then names what cannot be deleted.
        if (gone === 0) throw new Error(`documents found for erasure could not be deleted`);
        deleted += gone;
        await slice();
      }
    },
  };
}

/**
 * The read models as the erasure participant sees them: deleting what the counts were made from (the history entries,
 * or with the counts' own projection the watches: `counted`) first takes it out of the trending counts (erasure
 * deletes a user's documents with `deleteMany`; nothing else deletes entries).
 */
export function erasingTrendingToo(
  readModels: ReadModelStore,
  options: HistoryProjectionOptions = DEFAULT_TRENDING,
  counted: typeof HISTORY_COLLECTION | typeof TRENDING_WATCHES_COLLECTION = HISTORY_COLLECTION,
  page = ERASURE_PAGE,
): ReadModelStore {
  const counter = trendingCounter(readModels, readModels.collection<HistoryEntryDocument>(counted), options);
  const erasing = new Map<string, Collection<HistoryEntryDocument>>([
    [counted, pagedErasure(readModels.collection<HistoryEntryDocument>(counted), (entries) => counter.entriesErased(entries), page)],
  ]);
  // The entries, when the counts were made from the watches: deleted page by page too (50,000 at once held the event
  // loop), each page's items forgotten where nobody counts them (a deleted entry has no watch, and its item may still
  // name an hour left at zero).
  if (counted !== HISTORY_COLLECTION)
    erasing.set(
      HISTORY_COLLECTION,
      pagedErasure(
        historyEntries(readModels),
        (entries) => counter.itemsErased(entries.filter((entry) => entry.deleted).map((entry) => entry.item_id)),
        page,
      ),
    );
  return withCollections(
    readModels,
    <T extends Document>(name: string) => (erasing.get(name) ?? readModels.collection<T>(name)) as unknown as Collection<T>,
  );
}
