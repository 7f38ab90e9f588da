import { type History, HISTORY_LIMITS, type HistoryQuery, type Item, type Positions, type PositionsQuery } from '@udp/contracts';
import type { Collection } from '@udp/readmodel';
import type { HistoryEntryDocument, HistoryHeadDocument } from './history';
import { listHistoryFromDocuments, readPage } from './history-page-finds';
import { CHANGE_ORDER, ORDER, changedSince, entriesPage, nextChangesQuery, nextQuery, selection } from './history-selection';
import { BEGINNING, type SyncPosition, formatSyncToken, parseSyncToken, positionAfter } from './sync-token';

/* The history's queries, each a plain read of the read model. A list page's speed (prepared finds by shape, the way
   back for entries without their answer) is in history-page-finds.ts, the answers already given in answer-cache.ts. */

export interface HistoryReadModel {
  entries: Collection<HistoryEntryDocument>;
  heads: Collection<HistoryHeadDocument>;
}

/** How many of the user's changes are applied, and the version of their history they make (`historyHead`). */
export interface HistoryHead {
  count: number;
  version: string;
}

/**
 * How many of the user's changes the read model has fully applied: read before the entries, so an answer never claims
 * a change it does not show. `version`: the head's store position ('none' for a user without changes). A list's route
 * reads it first: `listHistory` is given it, and `HistoryAnswers` (answer-cache.ts) answers by its version.
 */
export async function historyHead({ heads }: HistoryReadModel, userId: string): Promise<HistoryHead> {
  const head = await heads.get(userId);
  return head ? { count: head.revision + 1, version: head.position } : { count: 0, version: 'none' };
}

/** A page of the history with its entries' answers (JSON texts); `historyJson` makes the answer's bytes. */
export interface HistoryPage extends Omit<History, 'data'> {
  answers: string[];
  /**
   * The version of the user's history the page was read from, when known: the same version and query
   * always give the same page (the version changes with every change of the user's entries).
   */
  version?: string;
}

/** The page's answer, byte for byte `JSON.stringify` of the History it stands for (`data` first). */
export function historyJson({ answers, version: _version, ...rest }: HistoryPage): string {
  return `{"data":[${answers.join(',')}],${JSON.stringify(rest).slice(1)}`;
}

/**
 * A page of the history. Without `since`: newest first, `next` continues with the date cursor, and
 * `sync_token` is the change position when the answer was read (a full listing's first page gives the one
 * to keep). With `since`: the entries changed after it, tombstones included unless `with_deleted=false`, in
 * change order; `next` continues with a later `since`, and `sync_token` is where this answer ends (the head
 * once nothing more is left). `limit=0` answers no entries: a cheap read of `last_update` and `sync_token`.
 */
export async function listHistory(model: HistoryReadModel, userId: string, query: HistoryQuery, head?: HistoryHead): Promise<HistoryPage> {
  const limit = query.limit ?? HISTORY_LIMITS.defaultPageSize;
  const { count: applied, version } = head ?? (await historyHead(model, userId));
  const changeMode = query.since !== undefined;
  const includeDeleted = query.with_deleted ?? changeMode;
  let from: SyncPosition | undefined;
  if (query.since !== undefined) {
    const since = parseSyncToken(query.since);
    // A token past the head does not belong to this history's change order (e.g. one given before the user's data
    // was erased and begun again): it counts from the beginning, so nothing is ever missed.
    from = since.count > applied ? BEGINNING : since;
  }
  // By the prepared find of the query's shape (history-page-finds.ts): the entries' kept answers only.
  const { rows, lastUpdate } = await readPage(model, userId, query, { includeDeleted, from, applied, limit });
  const more = rows.length > limit;
  const shown = rows.slice(0, limit);
  const answers = shown.map((row) => row.answer);
  // Entries written before they kept their answer, until `fillEntryAnswers` (history-upgrades.ts) has run (e.g. by
  // another instance): read from whole documents.
  if (answers.includes(null)) return listHistoryFromDocuments(model, userId, query, applied, version);
  const last = shown[shown.length - 1];
  let position: SyncPosition = { count: applied };
  let next: string | undefined;
  if (more && last) {
    if (changeMode) {
      position = positionAfter(last.revision!, last.item_id!);
      next = nextChangesQuery(query, position);
    } else {
      const { date, item_id } = JSON.parse(last.answer!) as Item;
      next = nextQuery(query, { date, item_id });
    }
  }
  return {
    answers: answers as string[],
    last_update: lastUpdate,
    ...(next !== undefined && { next }),
    sync_token: formatSyncToken(position),
    total: shown.length,
    version,
  };
}

/**
 * The entries changed after `since` (tombstones included), as documents, in change order: what the gateway's live sync
 * pulls (api/changes-route.ts), which gives each entry its own position. The same selection as `since=`; not a hot
 * path (a pull follows a change of this very user), so a plain find.
 */
export async function changedEntries(
  model: HistoryReadModel,
  userId: string,
  since: string,
  limit: number,
  /** Beyond this many events after `since`, no entry is read (the caller only learns how far behind it is). */
  reach = Infinity,
): Promise<{ entries: HistoryEntryDocument[]; sync_token: string; more: boolean; applied: number }> {
  const { count: applied } = await historyHead(model, userId);
  const from = parseSyncToken(since);
  if (applied - from.count > reach) return { entries: [], sync_token: since, more: false, applied };
  const where = changedSince(userId, selection(userId, {}, true), from, applied);
  const { shown, more, position } = await entriesPage(model, where, limit, applied, true);
  return { entries: shown, sync_token: formatSyncToken(position), more, applied };
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
  const { count: applied } = await historyHead(model, userId);
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
