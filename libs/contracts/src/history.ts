import { EpochMillis, businessId, pathInt32, queryBoolean, queryInteger } from './common';
import { z } from './zod';
import { defineRoute } from './routes/define-route';
import { commonErrors, empty, json, problem, quotaExceeded, writeErrors } from './routes/helpers';

/**
 * history-svc's contract: the schemas of its requests and answers, then its route table (`historyApi`).
 * Its events: events/history.ts.
 */

/** Limits of the history API (documented in the README). */
export const HISTORY_LIMITS = {
  defaultPageSize: 100,
  maxPageSize: 1000,
  maxBatchSize: 5000,
  maxItemIdsPerQuery: 1000,
  /** Per-user quota: entries of a history, deleted ones included (HISTORY_MAX_ENTRIES in history-svc). */
  maxEntries: 100_000,
} as const;

const ItemId = businessId('item_id');

// ---- an entry's fields -------------------------------------------------------------------------------------

/**
 * A history entry's fields, declared once, in the order its event stores them. Each has its name on the wire (the
 * API's, and the read model's rows'), its schema in the stored event (`stored`), in the answer (`answered`, `Item`) and
 * in an item a client sends (`sent`, `NewItem`; the technical id is the server's: a client sends none). The event's
 * data (events/history.ts), `Item` and `NewItem` are made from this list once, when the module loads; history-svc's
 * state takes the event's type, its rows `Item`'s. The code that makes the answers, rows and snapshot columns of each
 * entry names the fields itself (it runs for every entry: apps/history-svc). Adding one: docs/contributing.md, "Add a
 * field".
 */
export const HISTORY_ENTRY_FIELDS = {
  itemId: { wire: 'item_id', stored: z.string(), answered: z.string(), sent: ItemId },
  id: {
    wire: 'id',
    stored: z.number().int(),
    answered: z.number().int().openapi({ description: 'technical id (deprecated), a per-user sequence' }),
    sent: undefined,
  },
  date: {
    wire: 'date',
    stored: z.number().int(),
    answered: EpochMillis,
    sent: EpochMillis.optional().openapi({ description: 'when the item was added or last updated (ms); default: server time' }),
  },
  deleted: { wire: 'deleted', stored: z.boolean(), answered: z.boolean(), sent: z.boolean().optional() },
  deviceId: { wire: 'device_id', stored: z.string().optional(), answered: z.string().optional(), sent: z.string().max(256).optional() },
  lastPlaybackPosition: {
    wire: 'last_playback_position',
    stored: z.number().optional(),
    answered: z.number().optional(),
    sent: z.number().finite().min(0).max(1e9).optional().openapi({ description: 'seconds' }),
  },
} as const;
type EntryFields = typeof HISTORY_ENTRY_FIELDS;
type EntryField = keyof EntryFields;
const ENTRY_FIELDS = Object.keys(HISTORY_ENTRY_FIELDS) as EntryField[];

/** Each field's stored schema under its own name, in the declared order: the data of `HistoryItemRecorded`. */
export const StoredEntry = z.object(
  Object.fromEntries(ENTRY_FIELDS.map((field) => [field, HISTORY_ENTRY_FIELDS[field].stored])) as {
    [F in EntryField]: EntryFields[F]['stored'];
  },
);

/**
 * Each of `fields` under its wire name, with the schema `schemaOf` gives it, in the wire's order: by name, as the API
 * has always answered (the order of the OpenAPI document; history-svc writes its answers in it).
 */
function onTheWire(fields: EntryField[], schemaOf: (field: EntryField) => z.ZodType | undefined) {
  const wireNames = fields.map((field): [string, z.ZodType | undefined] => [HISTORY_ENTRY_FIELDS[field].wire, schemaOf(field)]);
  return Object.fromEntries(wireNames.sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** What an answer shows of an entry: each field's `answered` schema under its wire name. */
export const Item = z
  .object(
    onTheWire(ENTRY_FIELDS, (field) => HISTORY_ENTRY_FIELDS[field].answered) as {
      [F in EntryField as EntryFields[F]['wire']]: EntryFields[F]['answered'];
    },
  )
  .openapi('Item');
export type Item = z.infer<typeof Item>;

/** An item a client sends: each field but the id (the server's), its `sent` schema under its wire name. */
export const NewItem = z
  .object(
    onTheWire(
      ENTRY_FIELDS.filter((field) => field !== 'id'),
      (field) => HISTORY_ENTRY_FIELDS[field].sent,
    ) as { [F in Exclude<EntryField, 'id'> as EntryFields[F]['wire']]: EntryFields[F]['sent'] },
  )
  .openapi('NewItem');
export type NewItem = z.infer<typeof NewItem>;

export const HistoryItemBatch = z
  .object({ data: z.array(NewItem).max(HISTORY_LIMITS.maxBatchSize, `at most ${HISTORY_LIMITS.maxBatchSize} items per batch`) })
  .openapi('HistoryItemBatch');
export type HistoryItemBatch = z.infer<typeof HistoryItemBatch>;

/**
 * A position in a user's change order (issue 9): `since=<sync_token>` answers every entry changed after it,
 * whatever `date` its client sent. Opaque to clients; `0` is the beginning (the whole history).
 */
export const SYNC_TOKEN_PATTERN = /^[0-9]{1,15}(\.[A-Za-z0-9_-]{1,1400})?$/;
export const SyncToken = z
  .string()
  .regex(SYNC_TOKEN_PATTERN, 'since must be a sync_token from a history answer (or 0 for the beginning)')
  .openapi({
    description:
      'a sync_token from an earlier history answer (opaque), or 0 for the beginning: answers every entry changed after it, ' +
      'tombstones included, in change order, whatever date its client sent',
    example: '0',
  });

export const History = z
  .object({
    data: z.array(Item),
    last_update: EpochMillis.openapi({
      description:
        'newest date in the history (0 when empty); after=<last_update> misses entries written later with an older date: sync with since=<sync_token>',
    }),
    next: z.string().optional().openapi({ description: 'query string (starting with ?) that continues this query' }),
    sync_token: z.string().openapi({
      description:
        'position in the change order up to which this answer (with the pages before it) is complete; pass it as since= to get every later change',
    }),
    total: z.number().int().openapi({ description: 'number of items returned' }),
  })
  .openapi('History');
export type History = z.infer<typeof History>;

export const Positions = z.record(z.string(), z.number()).openapi('Positions', { description: 'item id -> last playback position (s)' });
export type Positions = z.infer<typeof Positions>;

export const HistoryQuery = z
  .object({
    after: queryInteger('after').optional(),
    before: queryInteger('before').optional(),
    before_item_id: businessId('before_item_id').optional(),
    limit: queryInteger('limit', HISTORY_LIMITS.maxPageSize)
      .optional()
      .openapi({ description: `0 to ${HISTORY_LIMITS.maxPageSize}; 0 answers no entries, only last_update and sync_token` }),
    since: SyncToken.optional(),
    with_deleted: queryBoolean('with_deleted')
      .optional()
      .openapi({ description: 'also return deleted items (default: false; with since: true)' }),
  })
  .openapi('HistoryQuery');
export type HistoryQuery = z.infer<typeof HistoryQuery>;

export const PositionsQuery = HistoryQuery.extend({
  item_ids: z
    .string()
    .regex(/^[^\u0000-\u001f\u007f]*$/, 'item_ids must not contain control characters')
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .refine((ids) => ids.length <= HISTORY_LIMITS.maxItemIdsPerQuery, `at most ${HISTORY_LIMITS.maxItemIdsPerQuery} item ids`)
    .optional(),
  return_missing: queryBoolean('return_missing').optional(),
}).openapi('PositionsQuery');
export type PositionsQuery = z.infer<typeof PositionsQuery>;

export const HistoryItemIdParam = z.object({ itemId: businessId('itemId') });
export const HistoryTechnicalIdParam = z.object({ id: pathInt32('id') });

// ---- routes --------------------------------------------------------------------------------------------------

const tags = ['history'];
const conflict = { 429: problem('another request is updating this history; see Retry-After') };
const quota = quotaExceeded(`by default ${HISTORY_LIMITS.maxEntries} entries per user, deleted ones included (HISTORY_MAX_ENTRIES)`);

/** The operations served the same at `/api/history` and `/api/history/v2`; `v` tells their operationIds apart. */
const historyAt = (base: '/api/history' | '/api/history/v2', v: '' | 'V2') => ({
  list: defineRoute({
    operationId: `listHistory${v}`,
    method: 'get',
    path: base,
    tags,
    summary: 'List the history, newest first',
    request: { query: HistoryQuery },
    responses: { 200: json(History, 'the selected part of the history'), ...commonErrors },
  }),
  add: defineRoute({
    operationId: `addHistoryItem${v}`,
    method: 'post',
    path: base,
    tags,
    summary: 'Add or update an item (newest date wins)',
    request: { body: NewItem },
    responses: { 200: json(Item, 'the stored item'), ...writeErrors, ...quota, ...conflict },
  }),
  clear: defineRoute({
    operationId: `clearHistory${v}`,
    method: 'delete',
    path: base,
    tags,
    summary: 'Delete the whole history (tombstones)',
    responses: { 204: empty('deleted'), ...commonErrors, ...conflict },
  }),
  addBatch: defineRoute({
    operationId: `addHistoryItems${v}`,
    method: 'post',
    path: `${base}/batch`,
    tags,
    summary: 'Add or update several items atomically',
    request: { body: HistoryItemBatch },
    responses: { 204: empty('stored'), ...writeErrors, ...quota, ...conflict },
  }),
  positions: defineRoute({
    operationId: `getPlaybackPositions${v}`,
    method: 'get',
    path: `${base}/positions`,
    tags,
    summary: 'Last playback positions by item id',
    request: { query: PositionsQuery },
    responses: {
      200: {
        ...json(Positions, 'item id -> position (s)'),
        headers: {
          'Sync-Token': {
            description: 'the sync_token of this answer (it cannot travel in the map): pass it as since= later',
            schema: { type: 'string' },
          },
        },
      },
      ...commonErrors,
    },
  }),
});

/** history-svc: `/api/history` (the first API) and `/api/history/v2`. */
export const historyApi = {
  unversioned: historyAt('/api/history', ''),
  v2: historyAt('/api/history/v2', 'V2'),
  deleteByItemId: defineRoute({
    operationId: 'deleteHistoryItemV2',
    method: 'delete',
    path: '/api/history/v2/{itemId}',
    tags,
    summary: 'Delete one item by its business id',
    request: { params: HistoryItemIdParam },
    responses: { 204: empty('deleted'), 404: problem('no such item'), ...commonErrors, ...conflict },
  }),
  deleteById: defineRoute({
    operationId: 'deleteHistoryItemById',
    method: 'delete',
    path: '/api/history/{id}',
    tags,
    summary: 'Delete one item by technical id',
    deprecated: true,
    request: { params: HistoryTechnicalIdParam },
    responses: { 204: empty('deleted'), 404: problem('no such item'), ...commonErrors, ...conflict },
  }),
};
