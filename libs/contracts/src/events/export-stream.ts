import { z } from '../zod';

/**
 * Events of a user's export stream (`export-<base64url(userId)>`, apps/export-worker) and of an erasure's own
 * stream (`erasure-<erasureId>`). Version 1 of each.
 */
export const ExportRequested = z.object({
  type: z.literal('ExportRequested'),
  data: z.object({
    key: z.string(),
    fileName: z.string(),
    callbackUrl: z.string().optional(),
    requestedAt: z.number().int(),
    expiresAt: z.number().int(),
  }),
});
/** A worker began building the zip into a new storage object (named before it is written, so a retry can remove it). */
export const ExportAttemptStarted = z.object({
  type: z.literal('ExportAttemptStarted'),
  data: z.object({ key: z.string(), storageId: z.string(), startedAt: z.number().int() }),
});
export const ExportCompleted = z.object({
  type: z.literal('ExportCompleted'),
  data: z.object({
    key: z.string(),
    storageId: z.string(),
    size: z.number().int(),
    sha256: z.string(),
    expiresAt: z.number().int(),
    completedAt: z.number().int(),
  }),
});
export const ExportFailed = z.object({
  type: z.literal('ExportFailed'),
  data: z.object({ key: z.string(), reason: z.string(), failedAt: z.number().int() }),
});
export const ExportCallbackAttempted = z.object({
  type: z.literal('ExportCallbackAttempted'),
  data: z.object({
    key: z.string(),
    delivered: z.boolean(),
    attempts: z.number().int(),
    error: z.string().optional(),
    at: z.number().int(),
  }),
});
export const ExportDeleted = z.object({
  type: z.literal('ExportDeleted'),
  data: z.object({ key: z.string(), reason: z.enum(['deleted', 'expired']), at: z.number().int() }),
});
export const ExportStreamEvent = z.discriminatedUnion('type', [
  ExportRequested,
  ExportAttemptStarted,
  ExportCompleted,
  ExportFailed,
  ExportCallbackAttempted,
  ExportDeleted,
]);
export type ExportStreamEvent = z.infer<typeof ExportStreamEvent>;

/** The erasure record keeps no user id: only a hash of it with the erasure id, enough to check who may read it. */
export const ErasureRequested = z.object({
  type: z.literal('ErasureRequested'),
  data: z.object({ erasureId: z.string(), userHash: z.string(), participants: z.array(z.string()), requestedAt: z.number().int() }),
});
export const ErasureParticipantConfirmed = z.object({
  type: z.literal('ErasureParticipantConfirmed'),
  data: z.object({
    service: z.string(),
    streamsDeleted: z.number().int(),
    documentsDeleted: z.number().int(),
    confirmedAt: z.number().int(),
  }),
});
export const ErasureCompleted = z.object({
  type: z.literal('ErasureCompleted'),
  data: z.object({ completedAt: z.number().int() }),
});
export const ErasureStreamEvent = z.discriminatedUnion('type', [ErasureRequested, ErasureParticipantConfirmed, ErasureCompleted]);
export type ErasureStreamEvent = z.infer<typeof ErasureStreamEvent>;

/**
 * Who is to be erased, on a stream of its own (`pending-erasure-<erasureId>`) that is deleted once the erasure has
 * completed: what lets the coordinator publish the request again after a crash, without the erasure record ever
 * holding the user id.
 */
export const PendingErasureRecorded = z.object({
  type: z.literal('PendingErasureRecorded'),
  data: z.object({ userId: z.string() }),
});
export type PendingErasureEvent = z.infer<typeof PendingErasureRecorded>;
