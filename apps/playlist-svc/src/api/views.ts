import type {
  Bookmark,
  BookmarkV3,
  FullPlaylist,
  FullPlaylistV3,
  PlaylistMetaData,
  PlaylistMetaDataV3,
  PlaylistType,
} from '@udp/contracts';
import type { Playlist } from '../domain/decider';
import type { BookmarkEntry } from '../projections/playlists';

/**
 * One data set, two views. What both API versions show of a playlist, whether it comes from the read model
 * (queries) or from the write side's state after a command (answers to writes). v2 `media_id` is v3
 * `itemId`; v2 `system` is v3 `type: watch_later`.
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
const newestFirst = (bookmarks: BookmarkEntry[]) => [...bookmarks].sort((a, b) => b.date - a.date || b.id - a.id);

export const bookmarkV2 = (b: BookmarkEntry): Bookmark => ({ date: b.date, id: b.id, media_id: b.itemId });
export const bookmarkV3 = (b: BookmarkEntry): BookmarkV3 => ({ date: b.date, id: b.id, itemId: b.itemId });

export const fullPlaylistV2 = (p: PlaylistView): FullPlaylist => ({
  bookmarks: newestFirst(p.bookmarks).map(bookmarkV2),
  id: p.playlistId,
  name: p.name,
  system: p.playlistType === 'watch_later',
});

export const fullPlaylistV3 = (p: PlaylistView): FullPlaylistV3 => ({
  bookmarks: newestFirst(p.bookmarks).map(bookmarkV3),
  businessId: p.businessId,
  id: p.playlistId,
  name: p.name,
  type: p.playlistType,
});

/** `systemName` (v2 `withSystemDefaultPlaylistName`) is the name the system playlist is listed under. */
export const metaDataV2 = (p: PlaylistView, systemName?: string): PlaylistMetaData => ({
  id: p.playlistId,
  name: p.playlistType === 'watch_later' && systemName !== undefined ? systemName : p.name,
  system: p.playlistType === 'watch_later',
  bookmarks_count: p.bookmarks.length,
  last_update: p.lastUpdate,
});

export const metaDataV3 = (p: PlaylistView): PlaylistMetaDataV3 => ({
  id: p.playlistId,
  businessId: p.businessId,
  name: p.name,
  type: p.playlistType,
  bookmarksCount: p.bookmarks.length,
  lastUpdate: p.lastUpdate,
});
