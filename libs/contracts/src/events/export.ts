import { z } from '../zod';

/**
 * Data export over the bus. `POST /api/data/export` records the request on the user's export stream and publishes
 * `requested`; an export-worker instance (consumer group) builds the zip and publishes `completed` or `failed`.
 * Key of every message: the user id. Messages carry opaque ids only, never file contents.
 */
export const EXPORT_TOPICS = {
  requested: 'userdata.export.requested',
  completed: 'userdata.export.completed',
  failed: 'userdata.export.failed',
} as const;

export const ExportRequestedMessage = z.object({
  /** The export key: random, at least 128 bits, URL-safe; also the capability in `publicUrl`. */
  key: z.string().min(22),
  userId: z.string().min(1),
  fileName: z.string().min(1),
  callbackUrl: z.string().optional(),
  requestedAt: z.number().int(),
});
export type ExportRequestedMessage = z.infer<typeof ExportRequestedMessage>;

export const ExportCompletedMessage = z.object({
  key: z.string(),
  userId: z.string(),
  /** Size of the zip in bytes and its SHA-256 (hex). */
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  url: z.string(),
  publicUrl: z.string(),
  expiresAt: z.number().int(),
  completedAt: z.number().int(),
});
export type ExportCompletedMessage = z.infer<typeof ExportCompletedMessage>;

export const ExportFailedMessage = z.object({
  key: z.string(),
  userId: z.string(),
  reason: z.string(),
  failedAt: z.number().int(),
});
export type ExportFailedMessage = z.infer<typeof ExportFailedMessage>;
