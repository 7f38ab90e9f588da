import { LRUCache } from 'lru-cache';
import type { History, HistoryQuery, Item, Positions, PositionsQuery } from '@udp/contracts';
import { HISTORY_LIMITS } from '@udp/contracts';
import { type Collection, type Filter, type Param, type PreparedFilter, type Scalar, param } from '@udp/readmodel';
import { type HistoryEntryDocument, type HistoryHeadDocument, toItem } from './history';
import { BEGINNING, type SyncPosition, formatSyncToken, parseSyncToken, positionAfter } from './sync-token';

/** List order: newest first; entries with the same date by item id, so the order is stable for paging. */
const ORDER = { date: -1, item_id: 1 } as const;
/** Change order (`since`): oldest change first; entries changed by one event by item id. */
const CHANGE_ORDER = { revision: 1, item_id: 1 } as const;

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
 * reads it first: `listHistory` is given it, and `HistoryAnswers` answers by its version.
 */
export async function historyHead({ heads }: HistoryReadModel, userId: string): Promise<HistoryHead> {
  const head = await heads.get(userId);
  return head ? { count: head.revision + 1, version: head.position } : { count: 0, version: 'none' };
}

/** A user's part of a kept answer's key: its length first, so no user id and query run into another's. */
const keyOf = (userId: string) => `${userId.length}:${userId}:`;

/**
 * Answers already given, by user, version of their history and query (as sent): the same three always answer the
 * same bytes (`HistoryPage.version`), so a device polling an unchanged history is answered without its page being read
 * again. An answer is never served for another version; a user's go with their erasure (`forget`, before their data
 * leaves the stores); past `maxBytes`, the least recently asked go first.
 */
export class HistoryAnswers {
  private readonly answers: LRUCache<string, { version: string; text: string }>;
  /** Erasures so far: an answer read while one ran (its reads may straddle it) is not kept. */
  private forgets = 0;

  constructor(private readonly maxBytes: number) {
    this.answers = new LRUCache({ maxSize: Math.max(1, maxBytes), sizeCalculation: ({ text }, key) => text.length + key.length + 64 });
  }

  get(userId: string, version: string, query: string): string | undefined {
    const known = this.answers.get(keyOf(userId) + query);
    return known?.version === version ? known.text : undefined;
  }

  /** Taken before a list is read, and given to `remember`. */
  generation(): number {
    return this.forgets;
  }

  /** Keeps `text` (unless an erasure came since `generation`, or it would take more than a tenth of the room); returns it. */
  remember(userId: string, version: string, query: string, text: string, generation: number): string {
    if (generation === this.forgets && text.length * 10 <= this.maxBytes) this.answers.set(keyOf(userId) + query, { version, text });
    return text;
  }

  /** Drops every answer of the user. */
  forget(userId: string): void {
    this.forgets++;
    for (const key of [...this.keysOf(userId)]) this.answers.delete(key);
  }

  /** Whether any answer of the user is kept. */
  holds(userId: string): boolean {
    return !this.keysOf(userId).next().done;
  }

  /** The user's keys: a scan of them all (an erasure is rare, and the keys are bounded by `maxBytes`). */
  private *keysOf(userId: string): Generator<string> {
    const prefix = keyOf(userId);
    for (const key of this.answers.keys()) if (key.startsWith(prefix)) yield key;
  }
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

/** What a page reads of an entry: its answer, and in change order where the next page starts. */
type PageRow = { answer: string | null; revision?: number | null; item_id?: string | null };
type Run = (values: Record<string, Scalar>, limit: number) => Promise<PageRow[]>;

/**
 * The prepared finds of a read model, one per shape of query (which filters it has), made when first asked: a
 * page binds the query's values to the statement of its shape and translates nothing.
 */
const preparedFinds = new WeakMap<HistoryReadModel, Map<string, Run>>();

function prepared(model: HistoryReadModel, shape: string, make: () => Run): Run {
  let finds = preparedFinds.get(model);
  if (!finds) preparedFinds.set(model, (finds = new Map()));
  let run = finds.get(shape);
  if (!run) finds.set(shape, (run = make()));
  return run;
}

const USER = param('userId', 'string');

/** The date filters of a query with parameters for its values (the shape: which of them it has). */
function preparedSelection(query: HistoryQuery, includeDeleted: boolean): PreparedFilter {
  const filter: PreparedFilter = { userId: USER };
  if (!includeDeleted) filter.deleted = false;
  const date: { $gte?: Param; $lt?: Param } = {};
  if (query.after !== undefined) date.$gte = param('after', 'number');
  if (query.before !== undefined && query.before_item_id !== undefined) {
    const before = param('before', 'number');
    filter.$or = [{ date: { $lt: before } }, { date: before, item_id: { $gt: param('beforeItemId', 'string') } }];
  } else if (query.before !== undefined) {
    date.$lt = param('before', 'number');
  }
  if (Object.keys(date).length) filter.date = date;
  return filter;
}

/** `changedSince` with parameters: entries changed after `from` and before the applied head. */
function preparedChanges(selected: PreparedFilter, afterItemId: boolean): PreparedFilter {
  const changed: PreparedFilter = afterItemId
    ? {
        revision: { $lt: param('applied', 'number') },
        $or: [
          { revision: { $gt: param('fromCount', 'number') } },
          { revision: param('fromCount', 'number'), item_id: { $gt: param('fromItemId', 'string') } },
        ],
      }
    : { revision: { $gte: param('fromCount', 'number'), $lt: param('applied', 'number') } };
  return { userId: USER, $and: [selected, changed] };
}

/** The date of the user's newest entry (0 for none): `last_update`. */
function newestDate(model: HistoryReadModel, userId: string): Promise<number> {
  const run = prepared(model, 'newest', () => {
    const find = model.entries.prepareFind({ userId: USER }, { sort: ORDER, select: ['date'] });
    return find as unknown as Run;
  });
  return run({ userId }, 1).then((rows) => (rows[0] as { date?: number } | undefined)?.date ?? 0);
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
  const values: Record<string, Scalar> = { userId };
  if (query.after !== undefined) values.after = query.after;
  if (query.before !== undefined) values.before = query.before;
  const cursor = query.before === undefined ? '' : query.before_item_id === undefined ? 'lt' : 'item';
  if (cursor === 'item') values.beforeItemId = query.before_item_id!;
  let shape = `${includeDeleted ? 'all' : 'live'} ${query.after === undefined ? '' : 'after'} ${cursor}`;
  let from: SyncPosition | undefined;
  if (query.since !== undefined) {
    const since = parseSyncToken(query.since);
    // A token past the head does not belong to this history's change order (e.g. one given before the user's data
    // was erased and begun again): it counts from the beginning, so nothing is ever missed.
    from = since.count > applied ? BEGINNING : since;
    values.applied = applied;
    values.fromCount = from.count;
    if (from.afterItemId !== undefined) values.fromItemId = from.afterItemId;
    shape += ` since ${from.afterItemId === undefined ? '' : 'item'}`;
  }
  const run = prepared(model, shape, () => {
    const selected = preparedSelection(query, includeDeleted);
    const filter = from === undefined ? selected : preparedChanges(selected, from.afterItemId !== undefined);
    const find = model.entries.prepareFind(filter, {
      sort: changeMode ? CHANGE_ORDER : ORDER,
      select: changeMode ? ['answer', 'revision', 'item_id'] : ['answer'],
    });
    return find as unknown as Run;
  });
  const [rows, lastUpdate] = await Promise.all([limit === 0 ? [] : run(values, limit + 1), newestDate(model, userId)]);
  const more = rows.length > limit;
  const shown = rows.slice(0, limit);
  const answers = shown.map((row) => row.answer);
  // Entries written before they kept their answer, until `fillEntryAnswers` has run (e.g. by another instance).
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
 * Up to `limit` entries matching `where`, in change order (`changeMode`) or the list's order, whether more follow, and
 * the sync position the page reaches: after its last entry when more changes follow, else everything applied.
 */
async function entriesPage(model: HistoryReadModel, where: Filter, limit: number, applied: number, changeMode: boolean) {
  const page =
    limit === 0 ? [] : await model.entries.find(where, { sort: changeMode ? CHANGE_ORDER : ORDER, limit: limit + 1, readOnly: true });
  const more = page.length > limit;
  const shown = page.slice(0, limit);
  const last = shown.at(-1);
  const position: SyncPosition = more && last && changeMode ? positionAfter(last.revision, last.item_id) : { count: applied };
  return { shown, more, last, position };
}

/** `listHistory` from whole documents, each entry's answer made here: for entries written without one. */
async function listHistoryFromDocuments(
  model: HistoryReadModel,
  userId: string,
  query: HistoryQuery,
  applied: number,
  version: string,
): Promise<HistoryPage> {
  const limit = query.limit ?? HISTORY_LIMITS.defaultPageSize;
  const changeMode = query.since !== undefined;
  const filter = selection(userId, query, query.with_deleted ?? changeMode);
  const where = query.since !== undefined ? changedSince(userId, filter, parseSyncToken(query.since), applied) : filter;
  const [{ shown, more, last, position }, newest] = await Promise.all([
    entriesPage(model, where, limit, applied, changeMode),
    model.entries.find({ userId }, { sort: ORDER, limit: 1, readOnly: true }),
  ]);
  return {
    answers: shown.map((doc) => JSON.stringify(toItem(doc))),
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
function nextQuery(query: HistoryQuery, last: Pick<Item, 'date' | 'item_id'>): string {
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
