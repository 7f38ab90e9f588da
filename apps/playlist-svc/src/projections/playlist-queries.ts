import { WATCH_LATER, WATCH_LATER_DEFAULT_NAME } from '@udp/contracts';
import type { Collection } from '@udp/readmodel';
import { type PlaylistDocument, playlistDocumentId } from './playlists';

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
