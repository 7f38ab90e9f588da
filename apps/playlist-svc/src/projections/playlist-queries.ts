import { WATCH_LATER, WATCH_LATER_DEFAULT_NAME, type PlaylistType } from '@udp/contracts';
import type { Collection } from '@udp/readmodel';
import type { Playlist } from '../domain/decider';
import { type BookmarkEntry, type PlaylistDocument, playlistDocumentId } from './playlists';

/**
 * One data set, two API versions. What both show of a playlist, whether it comes from the read model (a
 * `PlaylistDocument` is one) or from the write side's state after a command (`viewOf`, for answers to writes).
 * v2 `media_id` is v3 `itemId`; v2 `system` is v3 `type: watch_later`.
 */
export interface PlaylistView {
  playlistId: string;
  businessId: string;
  name: string;
  playlistType: PlaylistType;
  lastUpdate: number;
  bookmarks: BookmarkEntry[];
}

export function viewOf(playlist: Playlist): PlaylistView {
  return {
    playlistId: playlist.id,
    businessId: playlist.businessId,
    name: playlist.name,
    playlistType: playlist.type,
    lastUpdate: playlist.lastUpdate,
    bookmarks: [...playlist.bookmarks.values()],
  };
}

/** Bookmarks newest first; the later bookmark (higher id) first among equal dates. */
export const newestFirst = (bookmarks: BookmarkEntry[]) => [...bookmarks].sort((a, b) => b.date - a.date || b.id - a.id);

/**
 * Watch later exists for every user: until the user's first write creates it, the queries answer it empty,
 * exactly as that first write will create it.
 */
function unwrittenWatchLater(userId: string): PlaylistDocument {
  return {
    _id: playlistDocumentId(userId, WATCH_LATER),
    userId,
    playlistId: WATCH_LATER,
    businessId: WATCH_LATER,
    name: WATCH_LATER_DEFAULT_NAME,
    playlistType: 'watch_later',
    created: 0,
    lastUpdate: 0,
    bookmarks: [],
    deleted: false,
    revision: -1,
  };
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
