import type { History, HistoryQuery, Item, Positions, PositionsQuery } from '@udp/contracts';
import { HISTORY_LIMITS } from '@udp/contracts';
import type { Collection, Filter } from '@udp/readmodel';
import type { HistoryEntryDocument } from './history';

/** List order: newest first; entries with the same date by item id, so the order is stable for paging. */
const ORDER = { date: -1, item_id: 1 } as const;

/** The filter both the list and the positions share: user, deleted, after, and the before cursor. */
function selection(userId: string, query: HistoryQuery, includeDeleted: boolean): Filter {
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

export function toItem(doc: HistoryEntryDocument): Item {
  return {
    date: doc.date,
    deleted: doc.deleted,
    ...(doc.device_id !== undefined && { device_id: doc.device_id }),
    id: doc.id,
    item_id: doc.item_id,
    ...(doc.last_playback_position !== undefined && { last_playback_position: doc.last_playback_position }),
  };
}

export async function listHistory(entries: Collection<HistoryEntryDocument>, userId: string, query: HistoryQuery): Promise<History> {
  const limit = query.limit ?? HISTORY_LIMITS.defaultPageSize;
  const [page, newest] = await Promise.all([
    entries.find(selection(userId, query, query.with_deleted ?? false), { sort: ORDER, limit: limit + 1 }),
    entries.find({ userId }, { sort: ORDER, limit: 1 }),
  ]);
  const more = page.length > limit;
  const data = page.slice(0, limit).map(toItem);
  const last = data[data.length - 1];
  return {
    data,
    last_update: newest[0]?.date ?? 0,
    ...(more && last && { next: nextQuery(query, last) }),
    total: data.length,
  };
}

/** The query string that continues the same query after `last`. */
function nextQuery(query: HistoryQuery, last: Item): string {
  const params = new URLSearchParams();
  if (query.after !== undefined) params.set('after', String(query.after));
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  if (query.with_deleted !== undefined) params.set('with_deleted', String(query.with_deleted));
  params.set('before', String(last.date));
  params.set('before_item_id', last.item_id);
  return `?${params.toString()}`;
}

/** `return_missing` is documented as also returning deleted items, and does exactly that. */
export async function positions(entries: Collection<HistoryEntryDocument>, userId: string, query: PositionsQuery): Promise<Positions> {
  const filter = selection(userId, query, Boolean(query.with_deleted || query.return_missing));
  if (query.item_ids) filter.item_id = { $in: query.item_ids };
  const docs = await entries.find(filter, { sort: ORDER, limit: query.limit ?? HISTORY_LIMITS.maxPageSize });
  const result: Positions = {};
  for (const doc of docs) if (doc.last_playback_position !== undefined) result[doc.item_id] = doc.last_playback_position;
  return result;
}
