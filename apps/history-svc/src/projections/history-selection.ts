import type { HistoryQuery, Item } from '@udp/contracts';
import type { Filter } from '@udp/readmodel';
import type { HistoryReadModel } from './history-queries';
import { BEGINNING, type SyncPosition, formatSyncToken, positionAfter } from './sync-token';

/* What a history query selects, in which order, and how its next page is asked: shared by the queries
   (history-queries.ts) and by the list's prepared finds and its fallback (history-page-finds.ts). */

/** List order: newest first; entries with the same date by item id, so the order is stable for paging. */
export const ORDER = { date: -1, item_id: 1 } as const;
/** Change order (`since`): oldest change first; entries changed by one event by item id. */
export const CHANGE_ORDER = { revision: 1, item_id: 1 } as const;

/**
 * The change-order selection: the selected entries changed after `since` and no later than the applied head. A token
 * past the head does not belong to this history's change order (e.g. one given before the user's data was
 * erased and begun again): it counts from the beginning, so nothing is ever missed.
 */
export function changedSince(userId: string, selected: Filter, since: SyncPosition, applied: number): Filter {
  const from = since.count > applied ? BEGINNING : since;
  const changed: Filter =
    from.afterItemId === undefined
      ? { revision: { $gte: from.count, $lt: applied } }
      : {
          revision: { $lt: applied },
          $or: [{ revision: { $gt: from.count } }, { revision: from.count, item_id: { $gt: from.afterItemId } }],
        };
  // Both may hold an $or (the date cursor, the position inside a group): $and keeps them apart. The user
  // stays at the top level, where an index partitioned by user finds it.
  return { userId, $and: [selected, changed] };
}

/** The filter both the list and the positions share: user, deleted, after, and the before cursor. */
export function selection(userId: string, query: HistoryQuery, includeDeleted: boolean): Filter {
  const filter: Filter = { userId };
  if (!includeDeleted) filter.deleted = false;
  const date: { $gte?: number; $lt?: number } = {};
  if (query.after !== undefined) date.$gte = query.after;
  if (query.before !== undefined && query.before_item_id !== undefined) {
    // The entries after `before_item_id` among those dated exactly `before`, then everything older.
    filter.$or = [{ date: { $lt: query.before } }, { date: query.before, item_id: { $gt: query.before_item_id } }];
  } else if (query.before !== undefined) {
    date.$lt = query.before;
  }
  if (Object.keys(date).length) filter.date = date;
  return filter;
}

/**
 * Up to `limit` entries matching `where`, in change order (`changeMode`) or the list's order, whether more follow, and
 * the sync position the page reaches: after its last entry when more changes follow, else everything applied.
 */
export async function entriesPage(model: HistoryReadModel, where: Filter, limit: number, applied: number, changeMode: boolean) {
  const page =
    limit === 0 ? [] : await model.entries.find(where, { sort: changeMode ? CHANGE_ORDER : ORDER, limit: limit + 1, readOnly: true });
  const more = page.length > limit;
  const shown = page.slice(0, limit);
  const last = shown.at(-1);
  const position: SyncPosition = more && last && changeMode ? positionAfter(last.revision, last.item_id) : { count: applied };
  return { shown, more, last, position };
}

/** The parameters both kinds of `next` carry on unchanged. */
function carried(query: HistoryQuery): URLSearchParams {
  const params = new URLSearchParams();
  if (query.after !== undefined) params.set('after', String(query.after));
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  if (query.with_deleted !== undefined) params.set('with_deleted', String(query.with_deleted));
  return params;
}

/** The query string that continues the same query after `last`. */
export function nextQuery(query: HistoryQuery, last: Pick<Item, 'date' | 'item_id'>): string {
  const params = carried(query);
  params.set('before', String(last.date));
  params.set('before_item_id', last.item_id);
  return `?${params.toString()}`;
}

/** The query string that continues a `since` query from `position` (its date filters carried on). */
export function nextChangesQuery(query: HistoryQuery, position: SyncPosition): string {
  const params = carried(query);
  if (query.before !== undefined) params.set('before', String(query.before));
  if (query.before_item_id !== undefined) params.set('before_item_id', query.before_item_id);
  params.set('since', formatSyncToken(position));
  return `?${params.toString()}`;
}
