import { exportStreamEvents } from '@udp/contracts';
import { type Aggregate, oneStreamEach, oneStreamPerUser } from '@udp/eventsourcing';
import { type ExportCommand, type UserExports, exportsDecider } from './decider';
import { type ErasureCommand, type ErasureState, erasureDecider } from './erasure-decider';

/**
 * The events of one user's exports, and of one erasure. Their schemas are in libs/contracts/src/events/export-stream.ts,
 * with every event schema and the export and erasure messages of the bus (docs/architecture.md, "Event sourcing rules").
 */
export type ExportEvent = exportStreamEvents.ExportStreamEvent;
export type ErasureEvent = exportStreamEvents.ErasureStreamEvent;
export type PendingErasureEvent = exportStreamEvents.PendingErasureEvent;

/**
 * One stream per user (`exports-<userId>`, the id encoded as every service's), each event owned by `{ userId }` and
 * parsed by its schema on read. What the projections read the exports by. (`exports-`, not the former `export-` of
 * streams named by base64url and without owners: those are not read; docs/architecture.md.)
 */
export const exportStreams = { ...oneStreamPerUser('exports-'), events: exportStreamEvents.ExportStreamEvent };
export const exportStreamId = (userId: string) => exportStreams.streamOf(userId).id;

/** A user's exports as an aggregate: instances and the request route may race on them; a loser re-reads ten times. */
export const exportsAggregate: Aggregate<ExportCommand, ExportEvent, UserExports, string> = {
  ...exportStreams,
  decider: exportsDecider,
  conflictRetries: 10,
};

/** One stream per erasure (`erasure-<erasureId>`, a UUID the coordinator made): it names no user (a hash only). */
export const erasureStreams = { ...oneStreamEach('erasure-'), events: exportStreamEvents.ErasureStreamEvent };
export const erasureStreamId = (erasureId: string) => erasureStreams.streamOf(erasureId).id;

/** An erasure as an aggregate: every participant's confirmation lands on it, whichever instance receives it. */
export const erasureAggregate: Aggregate<ErasureCommand, ErasureEvent, ErasureState, string> = {
  ...erasureStreams,
  decider: erasureDecider,
  conflictRetries: 20,
};

/**
 * The user of an erasure not completed yet: a stream of its own, deleted once the erasure completes (its prefix
 * does not start with `erasure-`, so the erasure statuses never see it).
 */
export const pendingErasureStreamId = (erasureId: string) => `pending-erasure-${erasureId}`;
/** Parses the one event of a pending erasure's stream. */
export const parsePendingErasure = (stored: unknown): PendingErasureEvent => exportStreamEvents.PendingErasureRecorded.parse(stored);
