import type { History, HistoryQuery, Item, Positions, PositionsQuery } from '@udp/contracts';
import { HISTORY_LIMITS } from '@udp/contracts';
import type { Collection, Filter } from '@udp/readmodel';
import type { HistoryEntryDocument, HistoryHeadDocument } from './history';
import { BEGINNING, type SyncPosition, formatSyncToken, parseSyncToken, positionAfter } from './sync-token';

/** List order: newest first; entries with the same date by item id, so the order is stable for paging. */
const ORDER = { date: -1, item_id: 1 } as const;
/** Change order (`since`): oldest change first; entries changed by one event by item id. */
const CHANGE_ORDER = { revision: 1, item_id: 1 } as const;

export interface HistoryReadModel {
  entries: Collection<HistoryEntryDocument>;
  heads: Collection<HistoryHeadDocument>;
}

/**
 * How many of the user's changes the read model has fully applied: read before the entries, so an answer
 * never claims a change it does not show. `version`: the head's store position ('none' for a user without changes).
 */
async function appliedChanges({ heads }: HistoryReadModel, userId: string): Promise<{ count: number; version: string }> {
  const head = await heads.get(userId);
  return head ? { count: head.revision + 1, version: head.position } : { count: 0, version: 'none' };
}

/**
 * The change-order selection: the selected entries changed after `since` and no later than the applied head. A token
 * past the head does not belong to this history's change order (e.g. one given before the user's data was
 * erased and begun again): it counts from the beginning, so nothing is ever missed.
 */
function changedSince(userId: string, selected: Filter, since: SyncPosition, applied: number): Filter {
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

/**
 * An entry as the API shows it. Its JSON text is made once per stored document: the memory read model hands
 * out the documents it holds (`readOnly`) and stores a new one for every change, so a changed entry never
 * finds an old text here, and a list answer is mostly a join of texts already made.
 */
const itemTexts = new WeakMap<HistoryEntryDocument, string>();

function itemText(doc: HistoryEntryDocument): string {
  let text = itemTexts.get(doc);
  if (text === undefined) itemTexts.set(doc, (text = JSON.stringify(toItem(doc))));
  return text;
}

/** A page of the history with its entries as stored; `historyJson` makes the answer's bytes. */
export interface HistoryPage extends Omit<History, 'data'> {
  entries: HistoryEntryDocument[];
  /**
   * The version of the user's history the page was read from, when known: the same version and query
   * always give the same page (the version changes with every change of the user's entries).
   */
  version?: string;
}

/** The page's answer, byte for byte `JSON.stringify` of the History it stands for (`data` first). */
export function historyJson({ entries, version: _version, ...rest }: HistoryPage): string {
  return `{"data":[${entries.map(itemText).join(',')}],${JSON.stringify(rest).slice(1)}`;
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

/**
 * A page of the history. Without `since`: newest first, `next` continues with the date cursor, and
 * `sync_token` is the change position when the answer was read (a full listing's first page gives the one
 * to keep). With `since`: the entries changed after it, tombstones included unless `with_deleted=false`, in
 * change order; `next` continues with a later `since`, and `sync_token` is where this answer ends (the head
 * once nothing more is left). `limit=0` answers no entries: a cheap read of `last_update` and `sync_token`.
 */
export async function listHistory(model: HistoryReadModel, userId: string, query: HistoryQuery): Promise<HistoryPage> {
  const limit = query.limit ?? HISTORY_LIMITS.defaultPageSize;
  const { count: applied, version } = await appliedChanges(model, userId);
  const changeMode = query.since !== undefined;
  const filter = selection(userId, query, query.with_deleted ?? changeMode);
  const where = query.since !== undefined ? changedSince(userId, filter, parseSyncToken(query.since), applied) : filter;
  const [page, newest] = await Promise.all([
    limit === 0 ? [] : model.entries.find(where, { sort: changeMode ? CHANGE_ORDER : ORDER, limit: limit + 1, readOnly: true }),
    model.entries.find({ userId }, { sort: ORDER, limit: 1, readOnly: true }),
  ]);
  const more = page.length > limit;
  const shown = page.slice(0, limit);
  const last = shown[shown.length - 1];
  const position = more && last && changeMode ? positionAfter(last.revision, last.item_id) : { count: applied };
  return {
    entries: shown,
    last_update: newest[0]?.date ?? 0,
    ...(more && last && { next: changeMode ? nextChangesQuery(query, position) : nextQuery(query, last) }),
    sync_token: formatSyncToken(position),
    total: shown.length,
    version,
  };
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
function nextQuery(query: HistoryQuery, last: HistoryEntryDocument): string {
  const params = carried(query);
  params.set('before', String(last.date));
  params.set('before_item_id', last.item_id);
  return `?${params.toString()}`;
}

/** The query string that continues a `since` query from `position` (its date filters carried on). */
function nextChangesQuery(query: HistoryQuery, position: SyncPosition): string {
  const params = carried(query);
  if (query.before !== undefined) params.set('before', String(query.before));
  if (query.before_item_id !== undefined) params.set('before_item_id', query.before_item_id);
  params.set('since', formatSyncToken(position));
  return `?${params.toString()}`;
}

/**
 * `return_missing` is documented as also returning deleted items, and does exactly that. With `since`, the
 * positions of the entries changed after it, in change order; the answer is a map, so its sync token travels
 * in the `Sync-Token` header: where this answer ends (the head when `limit` did not cut it).
 */
export async function positions(
  model: HistoryReadModel,
  userId: string,
  query: PositionsQuery,
): Promise<{ positions: Positions; syncToken: string }> {
  const { count: applied } = await appliedChanges(model, userId);
  const changeMode = query.since !== undefined;
  const filter = selection(userId, query, Boolean(query.with_deleted || query.return_missing));
  if (query.item_ids) filter.item_id = { $in: query.item_ids };
  const where = query.since !== undefined ? changedSince(userId, filter, parseSyncToken(query.since), applied) : filter;
  const limit = query.limit ?? HISTORY_LIMITS.maxPageSize;
  const docs = limit === 0 ? [] : await model.entries.find(where, { sort: changeMode ? CHANGE_ORDER : ORDER, limit: limit + 1 });
  const shown = docs.slice(0, limit);
  const last = shown[shown.length - 1];
  const position = docs.length > limit && last && changeMode ? positionAfter(last.revision, last.item_id) : { count: applied };
  const result: Positions = {};
  for (const doc of shown) if (doc.last_playback_position !== undefined) result[doc.item_id] = doc.last_playback_position;
  return { positions: result, syncToken: formatSyncToken(position) };
}
