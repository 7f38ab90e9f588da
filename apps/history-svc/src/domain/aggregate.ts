import { historyEvents } from '@udp/contracts';
import { type Aggregate, oneStreamPerUser } from '@udp/eventsourcing';
import { type HistoryCommand, type HistoryQuotas, type HistoryState, historyDecider } from './decider';
import { historySnapshot } from './snapshot';

/**
 * The events of one user's history. Their schemas are in libs/contracts/src/events/history.ts, beside the bus
 * message that names these types for other consumers (docs/architecture.md, "Event sourcing rules").
 */
export type HistoryEvent = historyEvents.HistoryEvent;
export type HistoryItemRecorded = Extract<HistoryEvent, { type: 'HistoryItemRecorded' }>;

/**
 * One stream per user (`history-<userId>`, the id encoded), each event owned by `{ userId }` and parsed by its
 * schema on read; user ids are opaque. What the projections read the aggregate by.
 */
export const historyStreams = { ...oneStreamPerUser('history-'), events: historyEvents.HistoryEvent };
export const historyStream = historyStreams.streamOf;
export const historyStreamId = (userId: string) => historyStream(userId).id;
/** Every stream of a user in this service (erasure deletes them). */
export const historyStreamsOfUser = (userId: string) => [historyStreamId(userId)];

/**
 * A user's history as an aggregate. "A history is updated by one request at a time; a concurrent second update
 * receives 429" (the spec, section 8): an update that arrives while another is under way here is refused at once, and
 * one that loses the append's race to another process is never retried. Its state is snapshotted (a history can hold
 * 100,000 entries).
 */
export const historyAggregate = (quotas: HistoryQuotas): Aggregate<HistoryCommand, HistoryEvent, HistoryState, string> => ({
  ...historyStreams,
  decider: historyDecider(quotas),
  snapshot: historySnapshot,
  conflictRetries: 0,
  whileWriting: 'refuse',
});
