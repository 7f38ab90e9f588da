import { EpochMillis } from './common';
import { z } from './zod';
import { defineRoute } from './routes/define-route';
import { commonErrors, empty, json, problem, writeErrors } from './routes/helpers';

/**
 * The data-management contract (export-worker): the schemas of its requests and answers, then its route table
 * (`exportApi`). Its stored events: events/export-stream.ts and events/erasure.ts; its bus messages: events/export.ts.
 */

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

// ---- routes --------------------------------------------------------------------------------------------------

const tags = ['data management'];
const zip = (description: string) => ({
  description,
  content: {
    'application/zip': {
      schema: z.string().openapi({
        format: 'binary',
        description: 'one JSON file per area and manifest.json (format version, counts, SHA-256 per file)',
      }),
    },
  },
});
const notFound = { 404: problem('no such export (or not yours), deleted, expired or not ready') };

/** export-worker: exports of all of a user's data, and erasure. A malformed export key is no export: 404. */
export const exportApi = {
  start: defineRoute({
    operationId: 'startExport',
    method: 'post',
    path: '/api/data/export',
    tags,
    summary: 'Start an export of all the data of the caller',
    description:
      'Answers at once (status pending); the zip is built in the background. When ready, the ExportStatus is POSTed to callbackUrl with `X-Signature: sha256=<hex HMAC-SHA256 of the body>`.',
    request: { body: ExportRequest },
    responses: { 201: json(ExportStatus, 'the export, pending'), ...writeErrors },
  }),
  list: defineRoute({
    operationId: 'listExports',
    method: 'get',
    path: '/api/data/export',
    tags,
    summary: 'The exports of the caller that have not expired, newest first',
    responses: { 200: json(z.array(ExportStatus), 'the exports'), ...commonErrors },
  }),
  deleteAll: defineRoute({
    operationId: 'deleteAllExports',
    method: 'delete',
    path: '/api/data/export',
    tags,
    summary: 'Delete every export of the caller and its file',
    responses: { 204: empty('deleted'), ...commonErrors },
  }),
  download: defineRoute({
    operationId: 'downloadExport',
    method: 'get',
    path: '/api/data/export/{key}',
    malformedPathIsNotFound: true,
    tags,
    summary: "Download an export (the `url`; needs the owner's credentials)",
    request: { params: ExportKeyParam },
    responses: { 200: zip('the zip'), ...commonErrors, ...notFound },
  }),
  downloadPublic: defineRoute({
    operationId: 'downloadPublicExport',
    method: 'get',
    path: '/api/data/export/public/{key}',
    malformedPathIsNotFound: true,
    tags,
    security: [],
    summary: 'Download an export without credentials (the `publicUrl`)',
    description: 'The key is the capability: anyone holding the address can download until the export expires or is deleted.',
    request: { params: ExportKeyParam },
    responses: { 200: zip('the zip'), ...notFound },
  }),
  delete: defineRoute({
    operationId: 'deleteExport',
    method: 'delete',
    path: '/api/data/export/{key}',
    malformedPathIsNotFound: true,
    tags,
    summary: 'Delete one export and its file',
    request: { params: ExportKeyParam },
    responses: { 204: empty('deleted'), ...commonErrors, ...notFound },
  }),
  erase: defineRoute({
    operationId: 'eraseUserData',
    method: 'delete',
    path: '/api/data',
    tags,
    summary: 'Erase all the data of the caller in every service',
    description:
      'Answers 204 once every service confirmed within ERASURE_TIMEOUT_MS; otherwise 202 with the status address (Location), and the erasure still completes.',
    responses: { 204: empty('erased everywhere'), 202: json(ErasureStatus, 'accepted, still running; see Location'), ...commonErrors },
  }),
  erasure: defineRoute({
    operationId: 'getErasure',
    method: 'get',
    path: '/api/data/erasure/{erasureId}',
    tags,
    summary: 'Status of an erasure the caller requested',
    request: { params: ErasureIdParam },
    responses: { 200: json(ErasureStatus, 'the erasure'), ...commonErrors, 404: problem('no such erasure (or not yours)') },
  }),
};
