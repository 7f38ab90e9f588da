import { z } from '../zod';

/**
 * User-data erasure, coordinated over the bus (docs/architecture.md).
 * The coordinator (export-worker, behind `DELETE /api/data`) publishes `requested`; every participant (each
 * service that holds user data, the export-worker for its exports) deletes the user's streams, read models and
 * checkpoint entries, then publishes `confirmed`; once all participants confirmed, the coordinator publishes
 * `completed` for the data-management team. Key of every message: the user id. Messages carry only opaque ids.
 */
export const ERASURE_TOPICS = {
  requested: 'userdata.erasure.requested',
  confirmed: 'userdata.erasure.confirmed',
  completed: 'userdata.erasure.completed',
} as const;

/** The participants whose confirmation completes an erasure, by default (configurable by `ERASURE_PARTICIPANTS`). */
export const DEFAULT_ERASURE_PARTICIPANTS = ['history-svc', 'playlist-svc', 'preference-svc', 'profile-svc', 'export-worker'] as const;

export const ErasureRequestedMessage = z.object({
  erasureId: z.string().min(1),
  userId: z.string().min(1),
  requestedAt: z.number().int(),
  /**
   * When present, only these participants act; the others ignore the message. A request published again (after a
   * crash, or while a participant is late) names only those that have not confirmed yet.
   */
  participants: z.array(z.string().min(1)).optional(),
});
export type ErasureRequestedMessage = z.infer<typeof ErasureRequestedMessage>;

export const ErasureConfirmedMessage = z.object({
  erasureId: z.string().min(1),
  userId: z.string().min(1),
  /** The participant that confirms, e.g. `history-svc`. */
  service: z.string().min(1),
  /** How many event streams and read-model documents it deleted (for the audit trail, no content). */
  streamsDeleted: z.number().int().nonnegative(),
  documentsDeleted: z.number().int().nonnegative(),
  confirmedAt: z.number().int(),
});
export type ErasureConfirmedMessage = z.infer<typeof ErasureConfirmedMessage>;

export const ErasureCompletedMessage = z.object({
  erasureId: z.string().min(1),
  userId: z.string().min(1),
  services: z.array(z.string()),
  requestedAt: z.number().int(),
  completedAt: z.number().int(),
});
export type ErasureCompletedMessage = z.infer<typeof ErasureCompletedMessage>;
