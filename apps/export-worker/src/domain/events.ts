import type { exportStreamEvents } from '@udp/contracts';

/**
 * The events of one user's exports, and of one erasure. Their schemas are in libs/contracts/src/events/export-stream.ts,
 * with every event schema and the export and erasure messages of the bus (docs/architecture.md, "Event sourcing rules").
 */
export type ExportEvent = exportStreamEvents.ExportStreamEvent;
export type ErasureEvent = exportStreamEvents.ErasureStreamEvent;
export type PendingErasureEvent = exportStreamEvents.PendingErasureEvent;

export const EXPORT_STREAM_PREFIX = 'export-';
export const ERASURE_STREAM_PREFIX = 'erasure-';

/**
 * One stream per user. The user id is base64url-encoded, so no two user ids can ever give the same stream name
 * (an id may hold `-` or any character) and the name decodes back to exactly that id.
 */
export const exportStreamId = (userId: string) => `${EXPORT_STREAM_PREFIX}${Buffer.from(userId, 'utf8').toString('base64url')}`;
export const userIdOfExportStream = (streamId: string) =>
  Buffer.from(streamId.slice(EXPORT_STREAM_PREFIX.length), 'base64url').toString('utf8');

/** One stream per erasure; its id is a UUID the coordinator made. */
export const erasureStreamId = (erasureId: string) => `${ERASURE_STREAM_PREFIX}${erasureId}`;
export const erasureIdOfStream = (streamId: string) => streamId.slice(ERASURE_STREAM_PREFIX.length);

/**
 * The user of an erasure not completed yet: a stream of its own, deleted once the erasure completes (its prefix
 * does not start with `erasure-`, so the erasure statuses never see it).
 */
export const pendingErasureStreamId = (erasureId: string) => `pending-erasure-${erasureId}`;

/** Maps stored events to the current shapes. All events are still at version 1, so these are the identity. */
export function upcastExportEvent(type: string, data: Record<string, unknown>): ExportEvent {
  return { type, data } as ExportEvent;
}
export function upcastErasureEvent(type: string, data: Record<string, unknown>): ErasureEvent {
  return { type, data } as ErasureEvent;
}
