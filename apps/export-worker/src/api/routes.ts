import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Router, type Response } from 'express';
import { exportApi } from '@udp/contracts';
import type { CommandHandler } from '@udp/eventsourcing';
import { badRequest, mountRoute, notFoundError, userIdOf } from '@udp/http-kit';
import type { Collection } from '@udp/readmodel';
import type { ExportCommand, UserExports } from '../domain/decider';
import type { ExportEvent } from '../domain/aggregate';
import { defaultFileName, sanitiseFileName } from '../domain/file-name';
import type { ErasureRow } from '../projections/erasures';
import { toErasureStatus } from '../projections/erasures';
import { type ExportAddresses, type ExportRow, exportStatus, toStatus } from '../projections/exports';
import { type AllowedHost, CallbackRefused, type Resolver, checkCallbackUrl } from '../worker/callback';
import { userHash } from '../worker/erasure';
import { type ExportStorage, removeExportFiles } from '../worker/storage';

export interface ExportRouteDeps {
  /** The exports aggregate's command handler (app.ts). */
  handle: CommandHandler<ExportCommand, ExportEvent, UserExports, string>;
  rows: Collection<ExportRow>;
  erasures: Collection<ErasureRow>;
  storage: ExportStorage;
  addresses: ExportAddresses;
  allowedCallbackHosts: AllowedHost[];
  resolve?: Resolver;
  ttlMs: number;
  maxLiveExports: number;
  now: () => number;
  erase(userId: string): Promise<{ erasureId: string; completed: boolean }>;
}

const newKey = () => randomBytes(16).toString('base64url');

/** Sends the zip of a ready export that has not expired; 404 for anything else. */
async function sendZip(deps: ExportRouteDeps, doc: ExportRow | null, res: Response): Promise<void> {
  if (!doc || doc.status !== 'ready' || !doc.storageId || doc.expiresAt <= deps.now()) throw notFoundError('no such export');
  const object = await deps.storage.open(doc.storageId);
  if (!object) throw notFoundError('no such export');
  res.status(200);
  res.attachment(doc.fileName);
  res.setHeader('content-type', 'application/zip');
  res.setHeader('content-length', String(object.size));
  res.setHeader('cache-control', 'no-store');
  await pipeline(object.stream, res);
}

/** `GET /api/data/export/public/{key}`: no credentials; the key is the capability. */
export function publicExportRoutes(deps: ExportRouteDeps): Router {
  const router = Router();
  mountRoute(router, exportApi.downloadPublic, async ({ params }, _req, res) => {
    await sendZip(deps, await deps.rows.get(params.key), res);
  });
  return router;
}

/** HTTP <-> commands and queries of `/api/data`: exports of the caller and erasure. */
export function exportRoutes(deps: ExportRouteDeps): Router {
  const router = Router();
  const ownDoc = async (userId: string, key: string) => {
    const doc = await deps.rows.get(key);
    return doc && doc.userId === userId && doc.status !== 'deleted' ? doc : null;
  };

  mountRoute(router, exportApi.start, async ({ body }, _req, res) => {
    const userId = userIdOf(res);
    const now = deps.now();
    const fileName = body.fileName === undefined ? defaultFileName(now) : sanitiseFileName(body.fileName);
    if (fileName === null) throw badRequest('fileName has no usable characters', [{ field: 'fileName', message: 'must hold a file name' }]);
    if (body.callbackUrl !== undefined) {
      try {
        await checkCallbackUrl(body.callbackUrl, deps.allowedCallbackHosts, deps.resolve);
      } catch (error) {
        if (!(error instanceof CallbackRefused)) throw error;
        throw badRequest(`callbackUrl refused: ${error.message}`, [{ field: 'callbackUrl', message: error.message }]);
      }
    }
    const key = newKey();
    const { newState } = await deps.handle(userId, {
      type: 'RequestExport',
      data: { key, fileName, callbackUrl: body.callbackUrl, ttlMs: deps.ttlMs, maxLive: deps.maxLiveExports },
    });
    const requested = newState.exports.get(key)!;
    const status = exportStatus(
      {
        key,
        fileName: requested.fileName,
        status: requested.status,
        createdOn: requested.requestedAt,
        expiresAt: requested.expiresAt,
        ...(requested.callbackUrl !== undefined && { callback: { status: 'pending', attempts: 0 } }),
      },
      deps.addresses,
    );
    res.status(201).location(deps.addresses.url(key)).json(status);
  });

  mountRoute(router, exportApi.list, async (_input, _req, res) => {
    const now = deps.now();
    const docs = await deps.rows.find({ userId: userIdOf(res) }, { sort: { createdOn: -1 } });
    res.json(docs.filter((d) => d.status !== 'deleted' && d.expiresAt > now).map((d) => toStatus(d, deps.addresses)));
  });

  mountRoute(router, exportApi.deleteAll, async (_input, _req, res) => {
    const { newEvents, newState } = await deps.handle(userIdOf(res), { type: 'DeleteAllExports', data: {} });
    await removeExportFiles(
      deps.storage,
      newState,
      newEvents.map((e) => e.data.key),
    );
    res.status(204).end();
  });

  mountRoute(router, exportApi.download, async ({ params }, _req, res) => {
    await sendZip(deps, await ownDoc(userIdOf(res), params.key), res);
  });

  mountRoute(router, exportApi.delete, async ({ params }, _req, res) => {
    const userId = userIdOf(res);
    const doc = await ownDoc(userId, params.key);
    if (!doc) throw notFoundError('no such export');
    const { newState } = await deps.handle(userId, { type: 'DeleteExport', data: { key: doc._id, reason: 'deleted' } });
    await removeExportFiles(deps.storage, newState, [doc._id]);
    res.status(204).end();
  });

  mountRoute(router, exportApi.erase, async (_input, _req, res) => {
    const { erasureId, completed } = await deps.erase(userIdOf(res));
    if (completed) return void res.status(204).end();
    const doc = await deps.erasures.get(erasureId);
    res.status(202).location(`/api/data/erasure/${erasureId}`);
    res.json(doc ? toErasureStatus(doc) : { erasureId, status: 'pending' });
  });

  mountRoute(router, exportApi.erasure, async ({ params: { erasureId } }, _req, res) => {
    const doc = await deps.erasures.get(erasureId);
    if (!doc || doc.userHash !== userHash(erasureId, userIdOf(res))) throw notFoundError('no such erasure');
    res.json(toErasureStatus(doc));
  });

  return router;
}
