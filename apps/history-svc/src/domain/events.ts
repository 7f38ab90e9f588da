import type { historyEvents } from '@udp/contracts';
import { STREAM_CATEGORIES, historyStreamId, ownedStream, userIdOfStream } from '@udp/eventsourcing';

/**
 * The events of one user's history. Their schemas are in libs/contracts/src/events/history.ts, beside the bus
 * message that names these types for other consumers (docs/architecture.md, "Event sourcing rules").
 */
export type HistoryEvent = historyEvents.HistoryEvent;
export type HistoryItemRecorded = Extract<HistoryEvent, { type: 'HistoryItemRecorded' }>;
export type HistoryItemDeleted = Extract<HistoryEvent, { type: 'HistoryItemDeleted' }>;
export type HistoryCleared = Extract<HistoryEvent, { type: 'HistoryCleared' }>;

export const HISTORY_STREAM_PREFIX = STREAM_CATEGORIES.history;

/** One stream per user (`history-<userId>`, the id encoded: libs/eventsourcing streams.ts); user ids are opaque. */
export { historyStreamId };
export const historyStream = (userId: string) => ownedStream(historyStreamId(userId), { userId });
export const userIdOfHistoryStream = (streamId: string) => userIdOfStream(HISTORY_STREAM_PREFIX, streamId);
/** Every stream of a user in this service (erasure deletes them). */
export const historyStreamsOfUser = (userId: string) => [historyStreamId(userId)];

/** Maps stored events to the current shapes. All events are still at version 1, so this is the identity. */
export function upcast(type: string, data: Record<string, unknown>): HistoryEvent {
  return { type, data } as HistoryEvent;
}
