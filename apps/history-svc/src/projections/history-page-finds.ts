import { HISTORY_LIMITS, type HistoryQuery } from '@udp/contracts';
import { type Param, type PreparedFilter, type Scalar, param, reusedFind } from '@udp/readmodel';
import { toItem } from './history';
import type { HistoryPage, HistoryReadModel } from './history-queries';
import { CHANGE_ORDER, ORDER, changedSince, entriesPage, nextChangesQuery, nextQuery, selection } from './history-selection';
import { type SyncPosition, formatSyncToken, parseSyncToken } from './sync-token';

/* How `listHistory` reads a page fast: a prepared find per shape of query (which filters it has), made when first
   asked and kept with the read model (`reusedFind`), so a page binds the query's values and translates nothing; it
   reads the entries' kept answers only. And the way back, for entries written before they kept one. */

/** What a page reads of an entry: its answer (null when not kept), and in change order where the next page starts. */
export type PageRow = { answer?: string | null; revision?: number | null; item_id?: string | null };

/**
 * Up to `limit` rows of the page `query` selects (`from`: where a `since` query starts, within the applied head) and
 * the date of the user's newest entry (`last_update`), each by the prepared find of its shape.
 */
export async function readPage(
  model: HistoryReadModel,
  userId: string,
  query: HistoryQuery,
  { includeDeleted, from, applied, limit }: { includeDeleted: boolean; from?: SyncPosition; applied: number; limit: number },
): Promise<{ rows: PageRow[]; lastUpdate: number }> {
  const changeMode = from !== undefined;
  const values: Record<string, Scalar> = { userId };
  if (query.after !== undefined) values.after = query.after;
  if (query.before !== undefined) values.before = query.before;
  const cursor = query.before === undefined ? '' : query.before_item_id === undefined ? 'lt' : 'item';
  if (cursor === 'item') values.beforeItemId = query.before_item_id!;
  let shape = `${includeDeleted ? 'all' : 'live'} ${query.after === undefined ? '' : 'after'} ${cursor}`;
  if (from !== undefined) {
    values.applied = applied;
    values.fromCount = from.count;
    if (from.afterItemId !== undefined) values.fromItemId = from.afterItemId;
    shape += ` since ${from.afterItemId === undefined ? '' : 'item'}`;
  }
  const run = reusedFind(model, shape, () => {
    const selected = preparedSelection(query, includeDeleted);
    const filter = from === undefined ? selected : preparedChanges(selected, from.afterItemId !== undefined);
    return model.entries.prepareFind(filter, {
      sort: changeMode ? CHANGE_ORDER : ORDER,
      select: changeMode ? ['answer', 'revision', 'item_id'] : ['answer'],
    });
  });
  const [rows, lastUpdate] = await Promise.all([limit === 0 ? [] : run(values, limit + 1), newestDate(model, userId)]);
  return { rows, lastUpdate };
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
  const run = reusedFind(model, 'newest', () => model.entries.prepareFind({ userId: USER }, { sort: ORDER, select: ['date'] }));
  return run({ userId }, 1).then((rows) => rows[0]?.date ?? 0);
}

/** `listHistory` from whole documents, each entry's answer made here: for entries written without one. */
export async function listHistoryFromDocuments(
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
