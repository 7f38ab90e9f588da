import type { ExportStatus } from '@udp/contracts';
import { type EventAt, type Projection, documentProjection } from '@udp/eventsourcing';
import type { Collection, ReadModelStore, Sealing } from '@udp/readmodel';
import { type ExportEvent, exportStreams } from '../domain/aggregate';
import type { ExportPhase } from '../domain/decider';

/** One document per export (by key), deleted ones kept as `deleted` so a replayed event cannot bring them back. */
export interface ExportRow {
  _id: string;
  userId: string;
  fileName: string;
  callbackUrl?: string;
  status: ExportPhase;
  createdOn: number;
  expiresAt: number;
  size?: number;
  sha256?: string;
  storageId?: string;
  reason?: string;
  callback?: ExportStatus['callback'];
  /** Ready with a callback whose outcome is not recorded yet (top-level, so the sweep can select on it). */
  callbackPending?: boolean;
  completedAt?: number;
  revision: number;
}

export const EXPORTS_COLLECTION = 'exports';
/**
 * How a store that seals (PostgreSQL) keeps a user's exports (docs/erasure.md): the fields their queries name; an
 * export is looked up by its key alone (kept hashed with the store's key).
 */
export const EXPORTS_SEALING: Sealing = {
  ownerField: 'userId',
  fields: { userId: 'owner', status: 'plain', createdOn: 'plain', expiresAt: 'plain', callbackPending: 'plain', completedAt: 'plain' },
};
export const exportRows = (readModels: ReadModelStore): Collection<ExportRow> => readModels.collection<ExportRow>(EXPORTS_COLLECTION);

/** The addresses of an export, from the public base address of the gateway. */
export interface ExportAddresses {
  url(key: string): string;
  publicUrl(key: string): string;
}

export function exportAddresses(publicBaseUrl: string): ExportAddresses {
  const base = publicBaseUrl.replace(/\/$/, '');
  return { url: (key) => `${base}/api/data/export/${key}`, publicUrl: (key) => `${base}/api/data/export/public/${key}` };
}

/** What an export's status shows: from a row of the read model, or from the export as a write left it. */
export type ExportStatusFields = { key: string } & Pick<
  ExportRow,
  'fileName' | 'status' | 'createdOn' | 'expiresAt' | 'size' | 'sha256' | 'reason' | 'callback'
>;

export function exportStatus(fields: ExportStatusFields, addresses: ExportAddresses): ExportStatus {
  const { key, size, sha256, reason, callback } = fields;
  return {
    createdOn: fields.createdOn,
    key,
    url: addresses.url(key),
    publicUrl: addresses.publicUrl(key),
    fileName: fields.fileName,
    status: fields.status === 'deleted' ? 'failed' : fields.status,
    ...(size !== undefined && { size }),
    ...(sha256 !== undefined && { sha256 }),
    expiresAt: fields.expiresAt,
    ...(reason !== undefined && { reason }),
    ...(callback && { callback }),
  };
}

export const toStatus = (row: ExportRow, addresses: ExportAddresses): ExportStatus => exportStatus({ ...row, key: row._id }, addresses);

/** Keeps `exports` current: one row per export, by key; the revision guard makes a replayed event change nothing. */
export function exportsProjection(readModels: ReadModelStore): Projection {
  return documentProjection({
    name: 'export-statuses',
    aggregate: exportStreams,
    collection: exportRows(readModels),
    documentId: (event) => event.data.key,
    evolve: evolveExportRow,
  });
}

function evolveExportRow(stored: ExportRow | null, event: ExportEvent, { id: userId, revision }: EventAt<string>): ExportRow | null {
  if (event.type === 'ExportRequested') {
    const { key, fileName, callbackUrl, requestedAt, expiresAt } = event.data;
    const callback = callbackUrl !== undefined && { callbackUrl, callback: { status: 'pending' as const, attempts: 0 } };
    return { _id: key, userId, fileName, status: 'pending', createdOn: requestedAt, expiresAt, revision, ...callback };
  }
  // A key is the user's own: an event naming another user's export changes nothing.
  if (!stored || stored.userId !== userId) return null;
  switch (event.type) {
    case 'ExportAttemptStarted':
      return { ...stored, revision };
    case 'ExportCompleted': {
      const { size, sha256, storageId, completedAt } = event.data;
      return {
        ...stored,
        status: 'ready',
        size,
        sha256,
        storageId,
        completedAt,
        callbackPending: stored.callbackUrl !== undefined,
        revision,
      };
    }
    case 'ExportFailed':
      return { ...stored, status: 'failed', reason: event.data.reason, revision };
    case 'ExportCallbackAttempted': {
      const { delivered, attempts, error } = event.data;
      const callback = { status: delivered ? 'delivered' : 'failed', attempts, ...(error !== undefined && { error }) } as const;
      return { ...stored, callback, callbackPending: false, revision };
    }
    case 'ExportDeleted':
      return { ...stored, status: 'deleted', callbackPending: false, revision };
  }
}
