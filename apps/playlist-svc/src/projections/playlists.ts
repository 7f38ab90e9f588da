import { PlaylistFields } from '@udp/contracts';
import { type EventAt, type Projection, documentProjection, userOfScopedId, userScopedId } from '@udp/eventsourcing';
import type { Collection, ReadModelStore, Sealing } from '@udp/readmodel';
import { type PlaylistEvent, playlistsStreams } from '../domain/aggregate';
import { type Bookmark, createdPlaylist } from '../domain/decider';

/** A document's bookmark: as the state holds it. */
export type BookmarkEntry = Bookmark;

/**
 * The fields the document stores under names of its own: the names it was first written with, which the stored
 * documents and the queries (playlist-queries.ts) keep. Every other field is stored under its declared name.
 */
const DOCUMENT_NAMES = { id: 'playlistId', type: 'playlistType' } as const;

/** A playlist's fields as its document stores them (libs/contracts/src/playlists.ts declares them). */
export type PlaylistDocumentFields = Omit<PlaylistFields, keyof typeof DOCUMENT_NAMES> & {
  playlistId: PlaylistFields['id'];
  playlistType: PlaylistFields['type'];
};

const documentName = (field: string): string => DOCUMENT_NAMES[field as keyof typeof DOCUMENT_NAMES] ?? field;

/** The fields as the document stores them, in their declared order (the order of the stored document). */
export function documentFields(fields: PlaylistFields): PlaylistDocumentFields {
  const stored = Object.keys(PlaylistFields.shape).map((field) => [documentName(field), fields[field as keyof PlaylistFields]]);
  return Object.fromEntries(stored) as PlaylistDocumentFields;
}

/**
 * The fields a document stores, under their declared names, read by their declaration as a stored event is: a field
 * declared after the document was written reads as its default, as it does in the older events.
 */
export function fieldsOfDocument(document: PlaylistDocumentFields): PlaylistFields {
  const fields = Object.keys(PlaylistFields.shape).map((field) => [field, document[documentName(field) as keyof PlaylistDocumentFields]]);
  return PlaylistFields.parse(Object.fromEntries(fields));
}

/**
 * One document per (user, playlist) with its bookmarks: every query of both API versions is a read of the
 * documents of one user (the list) or of one document (by technical id, or by business id). A deleted
 * playlist stays as a tombstone (`deleted: true`, no bookmarks) so that a replayed older event cannot bring
 * it back. `revision` is the stream revision the document reflects.
 */
export interface PlaylistDocument extends PlaylistDocumentFields {
  _id: string;
  userId: string;
  bookmarks: BookmarkEntry[];
  deleted: boolean;
  revision: number;
}

/** A new playlist's document (no bookmarks yet), its fields in their declared order then the document's own. */
export function newPlaylistDocument(userId: string, fields: PlaylistFields, revision: number): PlaylistDocument {
  return { _id: playlistDocumentId(userId, fields.id), userId, ...documentFields(fields), bookmarks: [], deleted: false, revision };
}

export const PLAYLISTS_COLLECTION = 'playlists';
/**
 * How a store that seals (PostgreSQL) keeps a user's playlists (docs/erasure.md): the fields their queries name, the
 * business id (the client's own) hashed with the user's key; the technical id is a random UUID.
 */
export const PLAYLIST_SEALING: Sealing = {
  ownerField: 'userId',
  ownerOfId: userOfScopedId,
  fields: { userId: 'owner', businessId: 'owner', playlistId: 'plain', created: 'plain', deleted: 'plain', revision: 'plain' },
};
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
  if (event.type === 'PlaylistCreated') return newPlaylistDocument(userId, createdPlaylist(event.data), revision);
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
