import type { ExportStatus } from '@udp/contracts';
import type { Projection } from '@udp/eventsourcing';
import type { RecordedEvent } from '@udp/eventstore';
import type { Collection, ReadModelStore } from '@udp/readmodel';
import { EXPORT_STREAM_PREFIX, type ExportEvent, userIdOfExportStream } from '../domain/events';

/** One document per export (by key), deleted ones kept as `deleted` so a replayed event cannot bring them back. */
export interface ExportDocument {
  _id: string;
  userId: string;
  fileName: string;
  callbackUrl?: string;
  status: 'pending' | 'ready' | 'failed' | 'deleted';
  createdOn: number;
  expiresAt: number;
  size?: number;
  sha256?: string;
  storageId?: string;
  reason?: string;
  callback?: { status: 'pending' | 'delivered' | 'failed'; attempts: number; error?: string };
  /** Ready with a callback whose outcome is not recorded yet (top-level, so the sweep can select on it). */
  callbackPending?: boolean;
  completedAt?: number;
  revision: number;
}

export const EXPORTS_COLLECTION = 'exports';
export const exportDocuments = (readModels: ReadModelStore): Collection<ExportDocument> =>
  readModels.collection<ExportDocument>(EXPORTS_COLLECTION);

/** The addresses of an export, from the public base address of the gateway. */
export interface ExportAddresses {
  url(key: string): string;
  publicUrl(key: string): string;
}

export function exportAddresses(publicBaseUrl: string): ExportAddresses {
  const base = publicBaseUrl.replace(/\/$/, '');
  return { url: (key) => `${base}/api/data/export/${key}`, publicUrl: (key) => `${base}/api/data/export/public/${key}` };
}

export function toStatus(doc: ExportDocument, addresses: ExportAddresses): ExportStatus {
  return {
    createdOn: doc.createdOn,
    key: doc._id,
    url: addresses.url(doc._id),
    publicUrl: addresses.publicUrl(doc._id),
    fileName: doc.fileName,
    status: doc.status === 'deleted' ? 'failed' : doc.status,
    ...(doc.size !== undefined && { size: doc.size }),
    ...(doc.sha256 !== undefined && { sha256: doc.sha256 }),
    expiresAt: doc.expiresAt,
    ...(doc.reason !== undefined && { reason: doc.reason }),
    ...(doc.callback && { callback: doc.callback }),
  };
}

/** Keeps `exports` current; every write is conditional on the stream revision (idempotent). */
export function exportsProjection(readModels: ReadModelStore): Projection {
  const docs = exportDocuments(readModels);
  return {
    name: 'export-statuses',
    streamPrefixes: [EXPORT_STREAM_PREFIX],
    async apply(recorded: RecordedEvent) {
      const userId = userIdOfExportStream(recorded.streamId);
      const event = { type: recorded.type, data: recorded.data } as ExportEvent;
      const revision = recorded.revision;
      if (event.type === 'ExportRequested') {
        const { key, fileName, callbackUrl, requestedAt, expiresAt } = event.data;
        await docs.upsertIfNewer({
          _id: key,
          userId,
          fileName,
          status: 'pending',
          createdOn: requestedAt,
          expiresAt,
          revision,
          ...(callbackUrl !== undefined && { callbackUrl, callback: { status: 'pending', attempts: 0 } }),
        });
        return;
      }
      const stored = await docs.get(event.data.key);
      if (!stored || stored.userId !== userId) return;
      switch (event.type) {
        case 'ExportAttemptStarted':
          return void (await docs.upsertIfNewer({ ...stored, revision }));
        case 'ExportCompleted': {
          const { size, sha256, storageId } = event.data;
          const completedAt = event.data.completedAt;
          return void (await docs.upsertIfNewer({
            ...stored,
            status: 'ready',
            size,
            sha256,
            storageId,
            completedAt,
            callbackPending: stored.callbackUrl !== undefined,
            revision,
          }));
        }
        case 'ExportFailed':
          return void (await docs.upsertIfNewer({ ...stored, status: 'failed', reason: event.data.reason, revision }));
        case 'ExportCallbackAttempted': {
          const { delivered, attempts, error } = event.data;
          const callback = { status: delivered ? 'delivered' : 'failed', attempts, ...(error !== undefined && { error }) } as const;
          return void (await docs.upsertIfNewer({ ...stored, callback, callbackPending: false, revision }));
        }
        case 'ExportDeleted':
          return void (await docs.upsertIfNewer({ ...stored, status: 'deleted', callbackPending: false, revision }));
      }
    },
  };
}
