import { EpochMillis, queryBoolean, queryInteger } from './common';
import { z } from './zod';

/** Limits of the history API (documented in the README). */
export const HISTORY_LIMITS = {
  defaultPageSize: 100,
  maxPageSize: 1000,
  maxBatchSize: 5000,
  maxItemIdsPerQuery: 1000,
} as const;

const ItemId = z.string().min(1, 'item_id must not be empty').max(256, 'item_id is at most 256 characters');

export const NewItem = z
  .object({
    date: EpochMillis.optional().openapi({ description: 'when the item was added or last updated (ms); default: server time' }),
    deleted: z.boolean().optional(),
    device_id: z.string().max(256).optional(),
    item_id: ItemId,
    last_playback_position: z.number().finite().min(0).max(1e9).optional().openapi({ description: 'seconds' }),
  })
  .openapi('NewItem');
export type NewItem = z.infer<typeof NewItem>;

export const Item = z
  .object({
    date: EpochMillis,
    deleted: z.boolean(),
    device_id: z.string().optional(),
    id: z.number().int().openapi({ description: 'technical id (deprecated), a per-user sequence' }),
    item_id: z.string(),
    last_playback_position: z.number().optional(),
  })
  .openapi('Item');
export type Item = z.infer<typeof Item>;

export const HistoryItemBatch = z
  .object({ data: z.array(NewItem).max(HISTORY_LIMITS.maxBatchSize, `at most ${HISTORY_LIMITS.maxBatchSize} items per batch`) })
  .openapi('HistoryItemBatch');
export type HistoryItemBatch = z.infer<typeof HistoryItemBatch>;

export const History = z
  .object({
    data: z.array(Item),
    last_update: EpochMillis.openapi({ description: 'newest date in the history (0 when empty); sync with after=<last_update>' }),
    next: z.string().optional().openapi({ description: 'query string (starting with ?) that continues this query' }),
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
    before_item_id: z.string().min(1).max(256).optional(),
    limit: queryInteger('limit', HISTORY_LIMITS.maxPageSize)
      .refine((n) => n >= 1, 'limit must be at least 1')
      .optional(),
    with_deleted: queryBoolean('with_deleted').optional(),
  })
  .openapi('HistoryQuery');
export type HistoryQuery = z.infer<typeof HistoryQuery>;

export const PositionsQuery = HistoryQuery.extend({
  item_ids: z
    .string()
    .transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean))
    .refine((ids) => ids.length <= HISTORY_LIMITS.maxItemIdsPerQuery, `at most ${HISTORY_LIMITS.maxItemIdsPerQuery} item ids`)
    .optional(),
  return_missing: queryBoolean('return_missing').optional(),
}).openapi('PositionsQuery');
export type PositionsQuery = z.infer<typeof PositionsQuery>;

export const HistoryItemIdParam = z.object({ itemId: ItemId });
export const HistoryTechnicalIdParam = z.object({
  id: z
    .string()
    .regex(/^\d{1,10}$/, 'id must be an integer')
    .transform(Number)
    .refine((n) => n <= 2_147_483_647, 'id must be an int32'),
});
