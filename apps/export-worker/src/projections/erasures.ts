import type { ErasureStatus } from '@udp/contracts';
import { type Projection, documentProjection } from '@udp/eventsourcing';
import type { Collection, ReadModelStore } from '@udp/readmodel';
import { erasureStreams } from '../domain/aggregate';

export interface ErasureRow {
  _id: string;
  userHash: string;
  participants: string[];
  confirmed: string[];
  status: 'pending' | 'completed';
  requestedAt: number;
  completedAt?: number;
  revision: number;
}

export const erasureRows = (readModels: ReadModelStore): Collection<ErasureRow> => readModels.collection<ErasureRow>('erasures');

export const toErasureStatus = (doc: ErasureRow): ErasureStatus => ({
  erasureId: doc._id,
  status: doc.status,
  requestedAt: doc.requestedAt,
  ...(doc.completedAt !== undefined && { completedAt: doc.completedAt }),
  participants: doc.participants,
  confirmed: doc.confirmed,
});

/** Keeps `erasures` current: one row per erasure; the revision guard makes a replayed event change nothing. */
export function erasuresProjection(readModels: ReadModelStore): Projection {
  return documentProjection({
    name: 'erasure-statuses',
    aggregate: erasureStreams,
    collection: erasureRows(readModels),
    documentId: (_event, { id: erasureId }) => erasureId,
    evolve(stored, event, { id: erasureId, revision }): ErasureRow | null {
      if (event.type === 'ErasureRequested') {
        const { userHash, participants, requestedAt } = event.data;
        return { _id: erasureId, userHash, participants, confirmed: [], status: 'pending', requestedAt, revision };
      }
      if (!stored) return null;
      if (event.type === 'ErasureParticipantConfirmed')
        return { ...stored, confirmed: [...stored.confirmed, event.data.service], revision };
      return { ...stored, status: 'completed', completedAt: event.data.completedAt, revision };
    },
  });
}
