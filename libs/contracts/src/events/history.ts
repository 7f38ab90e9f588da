import { StoredEntry } from '../history';
import { z } from '../zod';

/**
 * Events of a user's history (stream `history-<userId>`). Each carries the entry's full resulting values,
 * so applying one twice gives the same read model. Version 1 of each; a version 2 will be read by a schema here
 * that accepts both (every stored event is parsed by it). An entry's fields are declared once, in ../history.ts
 * (`HISTORY_ENTRY_FIELDS`): `HistoryItemRecorded` stores them as declared there (`StoredEntry`), a deletion three of them.
 */
export const HistoryItemRecorded = z.object({ type: z.literal('HistoryItemRecorded'), data: StoredEntry });

export const HistoryItemDeleted = z.object({
  type: z.literal('HistoryItemDeleted'),
  data: StoredEntry.pick({ itemId: true, id: true, date: true }),
});

export const HistoryCleared = z.object({
  type: z.literal('HistoryCleared'),
  data: z.object({ date: z.number().int(), itemIds: z.array(z.string()) }),
});

export const HistoryEvent = z.discriminatedUnion('type', [HistoryItemRecorded, HistoryItemDeleted, HistoryCleared]);
export type HistoryEvent = z.infer<typeof HistoryEvent>;

/** The topic of history changes, for the data-management consumers (documented in the AsyncAPI document). */
export const HISTORY_CHANGES_TOPIC = 'user-data.history.v1';

/** Integration event published on Kafka topic `user-data.history.v1` (key: user id; no personal data). */
export const HistoryChangedMessage = z.object({
  userId: z.string(),
  type: z.enum(['HistoryItemRecorded', 'HistoryItemDeleted', 'HistoryCleared']),
  revision: z.number().int(),
  occurredAt: z.number().int(),
});
export type HistoryChangedMessage = z.infer<typeof HistoryChangedMessage>;
