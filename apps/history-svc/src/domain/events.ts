import type { historyEvents } from '@udp/contracts';

/** The events of one user's history; schemas live in the contracts library. */
export type HistoryEvent = historyEvents.HistoryEvent;
export type HistoryItemRecorded = Extract<HistoryEvent, { type: 'HistoryItemRecorded' }>;
export type HistoryItemDeleted = Extract<HistoryEvent, { type: 'HistoryItemDeleted' }>;
export type HistoryCleared = Extract<HistoryEvent, { type: 'HistoryCleared' }>;

export const HISTORY_STREAM_PREFIX = 'history-';

/** One stream per user; user ids are opaque (never an e-mail or a name). */
export const historyStreamId = (userId: string) => `${HISTORY_STREAM_PREFIX}${userId}`;
export const userIdOfHistoryStream = (streamId: string) => streamId.slice(HISTORY_STREAM_PREFIX.length);

/** Maps stored events to the current shapes. All events are still at version 1, so this is the identity. */
export function upcast(type: string, data: Record<string, unknown>): HistoryEvent {
  return { type, data } as HistoryEvent;
}
