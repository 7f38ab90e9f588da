import { z } from 'zod';
import { BookmarkFields, PlaylistFields } from '@udp/contracts';
import type { SnapshotCodec } from '@udp/eventsourcing';
import type { Bookmark, Playlist, PlaylistsState } from './decider';

/** The state's playlists as stored: their fields, and their bookmarks as an array (in order). */
const EncodedPlaylist = PlaylistFields.extend({ bookmarks: z.array(BookmarkFields) });
const EncodedPlaylists = z.object({ playlists: z.array(EncodedPlaylist), lastBookmarkId: z.number() });

/** A user's folded playlists as a snapshot. Version 1: playlists and their bookmarks as arrays, in order. */
export const playlistsSnapshot: SnapshotCodec<PlaylistsState> = {
  version: 1,
  encode: (state) => ({
    playlists: [...state.playlists.values()].map((p) => ({ ...p, bookmarks: [...p.bookmarks.values()] })),
    lastBookmarkId: state.lastBookmarkId,
  }),
  decode(encoded) {
    const { playlists, lastBookmarkId } = EncodedPlaylists.parse(encoded);
    const byId = new Map<string, Playlist>();
    for (const p of playlists) byId.set(p.id, { ...p, bookmarks: new Map<string, Bookmark>(p.bookmarks.map((b) => [b.itemId, b])) });
    return { playlists: byId, lastBookmarkId };
  },
};
