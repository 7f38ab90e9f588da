import type { PlaylistType } from '@udp/contracts';
import { type EventAt, type Projection, documentProjection, userScopedId } from '@udp/eventsourcing';
import type { Collection, ReadModelStore } from '@udp/readmodel';
import { type PlaylistEvent, playlistsStreams } from '../domain/aggregate';
import type { Bookmark } from '../domain/decider';

/** A document's bookmark: as the state holds it. */
export type BookmarkEntry = Bookmark;

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
 * Keeps `playlists` up to date: one document per playlist, evolved by each of its events (a tombstone once deleted:
 * a later event of it changes nothing). The revision guard makes a replayed or duplicated event, or a second
 * instance applying the same event, change nothing.
 */
export function playlistsProjection(readModels: ReadModelStore): Projection {
  return documentProjection({
    name: 'playlists',
    aggregate: playlistsStreams,
    collection: playlistDocuments(readModels),
    documentId: (event, { id: userId }) => playlistDocumentId(userId, event.data.playlistId),
    evolve: evolvePlaylist,
  });
}

function evolvePlaylist(
  stored: PlaylistDocument | null,
  event: PlaylistEvent,
  { id: userId, revision }: EventAt<string>,
): PlaylistDocument | null {
  if (event.type === 'PlaylistCreated') {
    const { playlistId, businessId, name, playlistType, date } = event.data;
    const created = { created: date, lastUpdate: date, bookmarks: [], deleted: false };
    return { _id: playlistDocumentId(userId, playlistId), userId, playlistId, businessId, name, playlistType, ...created, revision };
  }
  if (!stored || stored.deleted) return null;
  switch (event.type) {
    case 'PlaylistRenamed':
      return { ...stored, name: event.data.name, lastUpdate: event.data.date, revision };
    case 'PlaylistDeleted':
      return { ...stored, deleted: true, bookmarks: [], lastUpdate: event.data.date, revision };
    case 'BookmarkAdded': {
      const { bookmarkId, itemId, date, addedAt } = event.data;
      const bookmarks = [...stored.bookmarks.filter((b) => b.itemId !== itemId), { id: bookmarkId, itemId, date }];
      return { ...stored, bookmarks, lastUpdate: addedAt, revision };
    }
    case 'BookmarksRemoved': {
      const ids = new Set(event.data.bookmarkIds);
      return { ...stored, bookmarks: stored.bookmarks.filter((b) => !ids.has(b.id)), lastUpdate: event.data.date, revision };
    }
  }
}
