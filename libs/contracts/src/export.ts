import { EpochMillis } from './common';
import { z } from './zod';

/** Longest `fileName` accepted (after sanitising). */
export const EXPORT_FILE_NAME_MAX = 200;

/** `POST /api/data/export`. Both fields are optional: no callback, and a default file name. */
export const ExportRequest = z
  .object({
    callbackUrl: z.string().max(2048, 'callbackUrl is at most 2048 characters').optional().openapi({
      description:
        'https address (a host listed in EXPORT_CALLBACK_HOSTS) that receives the ExportStatus, signed, when the export is ready',
    }),
    fileName: z
      .string()
      .max(1024, 'fileName is at most 1024 characters')
      .optional()
      .openapi({ description: 'name of the downloaded file; path parts and control characters are removed, `.zip` is added when missing' }),
  })
  .openapi('ExportRequest');
export type ExportRequest = z.infer<typeof ExportRequest>;

export const EXPORT_STATES = ['pending', 'ready', 'failed'] as const;

export const ExportCallbackStatus = z
  .object({
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.number().int().nonnegative(),
    error: z.string().optional().openapi({ description: 'why the last attempt failed' }),
  })
  .openapi('ExportCallbackStatus');

export const ExportStatus = z
  .object({
    createdOn: EpochMillis.openapi({ description: 'when the export was requested' }),
    key: z.string().openapi({ description: 'random (128 bits), URL-safe; the capability in publicUrl' }),
    url: z.string().openapi({ description: "download address that needs the owner's credentials" }),
    publicUrl: z.string().openapi({ description: 'download address without credentials, valid until expiresAt or deletion' }),
    fileName: z.string(),
    status: z.enum(EXPORT_STATES).openapi({ description: 'pending: being built; ready: downloadable; failed: see reason' }),
    size: z.number().int().nonnegative().optional().openapi({ description: 'bytes of the zip, once ready' }),
    sha256: z.string().optional().openapi({ description: 'SHA-256 of the zip (hex), once ready' }),
    expiresAt: EpochMillis.openapi({ description: 'after this the export and its file are gone (404)' }),
    reason: z.string().optional().openapi({ description: 'why the export failed' }),
    callback: ExportCallbackStatus.optional(),
  })
  .openapi('ExportStatus');
export type ExportStatus = z.infer<typeof ExportStatus>;

export const ExportKeyParam = z.object({
  key: z.string().regex(/^[A-Za-z0-9_-]{22,64}$/, 'key must be an export key'),
});

export const ErasureStatus = z
  .object({
    erasureId: z.string(),
    status: z.enum(['pending', 'completed']),
    requestedAt: EpochMillis,
    completedAt: EpochMillis.optional(),
    participants: z.array(z.string()).openapi({ description: 'services whose confirmation completes the erasure' }),
    confirmed: z.array(z.string()).openapi({ description: 'services that confirmed so far' }),
  })
  .openapi('ErasureStatus');
export type ErasureStatus = z.infer<typeof ErasureStatus>;

export const ErasureIdParam = z.object({
  erasureId: z.string().regex(/^[0-9a-f-]{36}$/, 'erasureId must be an erasure id'),
});
