import type { PlaylistType } from '@udp/contracts';
import type { RecordedEvent } from '@udp/eventstore';
import { type Projection, assertOwnedBy, userScopedId } from '@udp/eventsourcing';
import type { Collection, ReadModelStore } from '@udp/readmodel';
import { PLAYLISTS_STREAM_PREFIX, upcast, userIdOfPlaylistsStream } from '../domain/events';

export interface BookmarkEntry {
  id: number;
  itemId: string;
  date: number;
}

/**
 * One document per (user, playlist) with its bookmarks: every query of both API versions is a read of the
 * documents of one user (the list) or of one document (by technical id, or by business id). A deleted
 * playlist stays as a tombstone (`deleted: true`, no bookmarks) so that a replayed older event cannot bring
 * it back. `revision` is the stream revision the document reflects.
 */
export interface PlaylistDocument {
  _id: string;
  userId: string;
  playlistId: string;
  businessId: string;
  name: string;
  playlistType: PlaylistType;
  created: number;
  lastUpdate: number;
  bookmarks: BookmarkEntry[];
  deleted: boolean;
  revision: number;
}

export const PLAYLISTS_COLLECTION = 'playlists';
/** Every read-model document of a user (erasure deletes them). */
export const playlistDocumentsOfUser = (userId: string) => [{ collection: PLAYLISTS_COLLECTION, filter: { userId } }];
export const playlistDocumentId = (userId: string, playlistId: string) => userScopedId(userId, playlistId);

export function playlistDocuments(readModels: ReadModelStore): Collection<PlaylistDocument> {
  return readModels.collection<PlaylistDocument>(PLAYLISTS_COLLECTION);
}

/**
 * Keeps `playlists` up to date. Every write is conditional on the stream revision (upsertIfNewer), so a
 * replayed or duplicated event, or a second instance applying the same event, changes nothing.
 */
export function playlistsProjection(readModels: ReadModelStore): Projection {
  const documents = playlistDocuments(readModels);
  const update = async (
    userId: string,
    playlistId: string,
    revision: number,
    change: (doc: PlaylistDocument) => Partial<PlaylistDocument>,
  ) => {
    const stored = await documents.get(playlistDocumentId(userId, playlistId));
    if (!stored || stored.deleted || stored.revision >= revision) return;
    await documents.upsertIfNewer({ ...stored, ...change(stored), revision });
  };
  return {
    name: 'playlists',
    streamPrefixes: [PLAYLISTS_STREAM_PREFIX],
    async apply(recorded: RecordedEvent) {
      const userId = userIdOfPlaylistsStream(recorded.streamId);
      assertOwnedBy(recorded, { userId });
      const event = upcast(recorded.type, recorded.data);
      const revision = recorded.revision;
      switch (event.type) {
        case 'PlaylistCreated': {
          const { playlistId, businessId, name, playlistType, date } = event.data;
          await documents.upsertIfNewer({
            _id: playlistDocumentId(userId, playlistId),
            userId,
            playlistId,
            businessId,
            name,
            playlistType,
            created: date,
            lastUpdate: date,
            bookmarks: [],
            deleted: false,
            revision,
          });
          return;
        }
        case 'PlaylistRenamed':
          return update(userId, event.data.playlistId, revision, () => ({ name: event.data.name, lastUpdate: event.data.date }));
        case 'PlaylistDeleted':
          return update(userId, event.data.playlistId, revision, () => ({ deleted: true, bookmarks: [], lastUpdate: event.data.date }));
        case 'BookmarkAdded': {
          const { playlistId, bookmarkId, itemId, date, addedAt } = event.data;
          return update(userId, playlistId, revision, (doc) => ({
            bookmarks: [...doc.bookmarks.filter((b) => b.itemId !== itemId), { id: bookmarkId, itemId, date }],
            lastUpdate: addedAt,
          }));
        }
        case 'BookmarksRemoved': {
          const ids = new Set(event.data.bookmarkIds);
          return update(userId, event.data.playlistId, revision, (doc) => ({
            bookmarks: doc.bookmarks.filter((b) => !ids.has(b.id)),
            lastUpdate: event.data.date,
          }));
        }
      }
    },
  };
}
