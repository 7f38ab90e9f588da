import type { ErasureStatus } from '@udp/contracts';
import type { Projection } from '@udp/eventsourcing';
import type { RecordedEvent } from '@udp/eventstore';
import type { Collection, ReadModelStore } from '@udp/readmodel';
import { ERASURE_STREAM_PREFIX, type ErasureEvent, erasureIdOfStream } from '../domain/events';

export interface ErasureDocument {
  _id: string;
  userHash: string;
  participants: string[];
  confirmed: string[];
  status: 'pending' | 'completed';
  requestedAt: number;
  completedAt?: number;
  revision: number;
}

export const erasureDocuments = (readModels: ReadModelStore): Collection<ErasureDocument> =>
  readModels.collection<ErasureDocument>('erasures');

export const toErasureStatus = (doc: ErasureDocument): ErasureStatus => ({
  erasureId: doc._id,
  status: doc.status,
  requestedAt: doc.requestedAt,
  ...(doc.completedAt !== undefined && { completedAt: doc.completedAt }),
  participants: doc.participants,
  confirmed: doc.confirmed,
});

export function erasuresProjection(readModels: ReadModelStore): Projection {
  const docs = erasureDocuments(readModels);
  return {
    name: 'erasure-statuses',
    streamPrefixes: [ERASURE_STREAM_PREFIX],
    async apply(recorded: RecordedEvent) {
      const erasureId = erasureIdOfStream(recorded.streamId);
      const event = { type: recorded.type, data: recorded.data } as ErasureEvent;
      const revision = recorded.revision;
      if (event.type === 'ErasureRequested') {
        const { userHash, participants, requestedAt } = event.data;
        await docs.upsertIfNewer({ _id: erasureId, userHash, participants, confirmed: [], status: 'pending', requestedAt, revision });
        return;
      }
      const stored = await docs.get(erasureId);
      if (!stored) return;
      if (event.type === 'ErasureParticipantConfirmed') {
        await docs.upsertIfNewer({ ...stored, confirmed: [...stored.confirmed, event.data.service], revision });
      } else {
        await docs.upsertIfNewer({ ...stored, status: 'completed', completedAt: event.data.completedAt, revision });
      }
    },
  };
}
