import type { RecordedEvent } from '@udp/eventstore';
import { type Projection, assertOwnedBy, userScopedId } from '@udp/eventsourcing';
import type { Collection, ReadModelStore } from '@udp/readmodel';
import { HISTORY_STREAM_PREFIX, type HistoryEvent, upcast, userIdOfHistoryStream } from '../domain/events';

/**
 * One document per (user, item): the entry as the API shows it, plus the stream revision of its last change,
 * which is also its position in the user's change order (`since=<sync_token>` selects by it).
 */
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

/**
 * One document per user: the revision of the newest change applied to that user's entries. It is written
 * after the entries of the change, so a reader that sees it sees every entry up to it (a HistoryCleared
 * touches many entries, and MongoDB's updateMany is not atomic across them).
 */
export interface HistoryHeadDocument {
  _id: string;
  userId: string;
  revision: number;
  /**
   * The store's position of that change (a decimal string): unlike the revision, never the same for two states of
   * any history, even for a history erased and begun again, so it names the version of the user's entries.
   * Absent in heads projected before it was added.
   */
  position?: string;
}

export const HISTORY_COLLECTION = 'history_entries';
export const HISTORY_HEADS_COLLECTION = 'history_heads';
export const entryDocumentId = (userId: string, itemId: string) => userScopedId(userId, itemId);

/** Every read-model document of a user (erasure deletes them). */
export const historyDocumentsOfUser = (userId: string) => [
  { collection: HISTORY_COLLECTION, filter: { userId } },
  { collection: HISTORY_HEADS_COLLECTION, filter: { userId } },
];

export function historyEntries(readModels: ReadModelStore): Collection<HistoryEntryDocument> {
  return readModels.collection<HistoryEntryDocument>(HISTORY_COLLECTION);
}

export function historyHeads(readModels: ReadModelStore): Collection<HistoryHeadDocument> {
  return readModels.collection<HistoryHeadDocument>(HISTORY_HEADS_COLLECTION);
}

/**
 * Keeps `history_entries` and `history_heads` up to date. Every write is conditional on the stream revision,
 * so a replayed or duplicated event, or a second instance applying the same event, changes nothing.
 */
export function historyProjection(readModels: ReadModelStore): Projection {
  const entries = historyEntries(readModels);
  const heads = historyHeads(readModels);
  return {
    name: 'history-entries',
    streamPrefixes: [HISTORY_STREAM_PREFIX],
    async apply(recorded: RecordedEvent) {
      const userId = userIdOfHistoryStream(recorded.streamId);
      assertOwnedBy(recorded, { userId });
      const revision = recorded.revision;
      await applyToEntries(entries, upcast(recorded.type, recorded.data), userId, revision);
      await heads.upsertIfNewer({ _id: userId, userId, revision, position: String(recorded.position) });
    },
  };
}

async function applyToEntries(
  entries: Collection<HistoryEntryDocument>,
  event: HistoryEvent,
  userId: string,
  revision: number,
): Promise<void> {
  switch (event.type) {
    case 'HistoryItemRecorded': {
      const { itemId, id, date, deleted, deviceId, lastPlaybackPosition } = event.data;
      await entries.upsertIfNewer({
        _id: entryDocumentId(userId, itemId),
        userId,
        item_id: itemId,
        id,
        date,
        deleted,
        revision,
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
}
