import { ErasureIdParam, ErasureStatus, ExportKeyParam, ExportRequest, ExportStatus } from '../export';
import { z } from '../zod';
import { defineRoute } from './define-route';
import { commonErrors, empty, json, problem, writeErrors } from './helpers';

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
