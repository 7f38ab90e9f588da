import type { RecordedEvent } from '@udp/eventstore';
import type { Projection } from '@udp/eventsourcing';
import type { Collection, ReadModelStore } from '@udp/readmodel';
import { HISTORY_STREAM_PREFIX, upcast, userIdOfHistoryStream } from '../domain/events';

/** One document per (user, item): the entry as the API shows it, plus the stream revision it reflects. */
export interface HistoryEntryDocument {
  _id: string;
  userId: string;
  item_id: string;
  id: number;
  date: number;
  deleted: boolean;
  device_id?: string;
  last_playback_position?: number;
  revision: number;
}

export const HISTORY_COLLECTION = 'history_entries';
export const entryDocumentId = (userId: string, itemId: string) => `${userId}/${itemId}`;

export function historyEntries(readModels: ReadModelStore): Collection<HistoryEntryDocument> {
  return readModels.collection<HistoryEntryDocument>(HISTORY_COLLECTION);
}

/**
 * Keeps `history_entries` up to date. Every write is conditional on the stream revision, so a replayed or
 * duplicated event, or a second instance applying the same event, changes nothing.
 */
export function historyProjection(readModels: ReadModelStore): Projection {
  const entries = historyEntries(readModels);
  return {
    name: 'history-entries',
    streamPrefixes: [HISTORY_STREAM_PREFIX],
    async apply(recorded: RecordedEvent) {
      const userId = userIdOfHistoryStream(recorded.streamId);
      const event = upcast(recorded.type, recorded.data);
      const revision = recorded.revision;
      switch (event.type) {
        case 'HistoryItemRecorded': {
          const { itemId, id, date, deleted, deviceId, lastPlaybackPosition } = event.data;
          await entries.upsertIfNewer({
            _id: entryDocumentId(userId, itemId), userId, item_id: itemId, id, date, deleted, revision,
            ...(deviceId !== undefined && { device_id: deviceId }),
            ...(lastPlaybackPosition !== undefined && { last_playback_position: lastPlaybackPosition }),
          });
          return;
        }
        case 'HistoryItemDeleted': {
          const stored = await entries.get(entryDocumentId(userId, event.data.itemId));
          if (stored) await entries.upsertIfNewer({ ...stored, deleted: true, date: event.data.date, revision });
          return;
        }
        case 'HistoryCleared':
          await entries.updateMany(
            { userId, item_id: { $in: event.data.itemIds }, revision: { $lt: revision } },
            { deleted: true, date: event.data.date, revision },
          );
          return;
      }
    },
  };
}
