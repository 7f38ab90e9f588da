import { WATCH_LATER, type PlaylistFields } from '@udp/contracts';
import type { Collection } from '@udp/readmodel';
import { type Playlist, createdPlaylist, watchLaterCreated } from '../domain/decider';
import { type BookmarkEntry, type PlaylistDocument, fieldsOfDocument, newPlaylistDocument, playlistDocumentId } from './playlists';

/**
 * One data set, two API versions. What both show of a playlist: its fields (declared once, libs/contracts/src/
 * playlists.ts) and its bookmarks, whether from the read model (`viewOfDocument`) or from the write side's state after
 * a command (`viewOf`, for answers to writes). v2 `media_id` is v3 `itemId`; v2 `system` is v3 `type: watch_later`.
 */
export interface PlaylistView extends PlaylistFields {
  bookmarks: BookmarkEntry[];
}

export function viewOf({ bookmarks, ...fields }: Playlist): PlaylistView {
  return { ...fields, bookmarks: [...bookmarks.values()] };
}

export function viewOfDocument(document: PlaylistDocument): PlaylistView {
  return { ...fieldsOfDocument(document), bookmarks: document.bookmarks };
}

/**
 * An answer made from a view: the properties its schema states, in the schema's order (the order of the answer's
 * bytes, and of the OpenAPI document), taken from `values` by their names; nothing else.
 */
export function answerOf<Answer extends object>(schema: { shape: Record<keyof Answer, unknown> }): (values: Answer) => Answer {
  const names = Object.keys(schema.shape) as (keyof Answer)[];
  return (values) => Object.fromEntries(names.map((name) => [name, values[name]])) as Answer;
}

/** Bookmarks newest first; the later bookmark (higher id) first among equal dates. */
export const newestFirst = (bookmarks: BookmarkEntry[]) => [...bookmarks].sort((a, b) => b.date - a.date || b.id - a.id);

/**
 * Watch later exists for every user: until the user's first write creates it, the queries answer it empty,
 * exactly as that first write will create it.
 */
function unwrittenWatchLater(userId: string): PlaylistDocument {
  return newPlaylistDocument(userId, createdPlaylist(watchLaterCreated(0).data), -1);
}

/** The user's playlists: watch later first, then the others in creation order. */
export async function listPlaylists(documents: Collection<PlaylistDocument>, userId: string): Promise<PlaylistDocument[]> {
  const found = await documents.find({ userId, deleted: false }, { sort: { created: 1, playlistId: 1 } });
  const watchLater = found.find((d) => d.playlistType === 'watch_later') ?? unwrittenWatchLater(userId);
  return [watchLater, ...found.filter((d) => d.playlistType !== 'watch_later')];
}

/** v2: by technical id. */
export async function playlistById(
  documents: Collection<PlaylistDocument>,
  userId: string,
  playlistId: string,
): Promise<PlaylistDocument | null> {
  const doc = await documents.get(playlistDocumentId(userId, playlistId));
  if (doc && !doc.deleted) return doc;
  return playlistId === WATCH_LATER ? unwrittenWatchLater(userId) : null;
}

/** v3: by business id. */
export async function playlistByBusinessId(
  documents: Collection<PlaylistDocument>,
  userId: string,
  businessId: string,
): Promise<PlaylistDocument | null> {
  const [doc] = await documents.find({ userId, businessId, deleted: false }, { limit: 1 });
  if (doc) return doc;
  return businessId === WATCH_LATER ? unwrittenWatchLater(userId) : null;
}
