import type { playlistEvents } from '@udp/contracts';

/** The events of all the playlists of one user; schemas live in the contracts library. */
export type PlaylistEvent = playlistEvents.PlaylistEvent;
export type PlaylistCreated = Extract<PlaylistEvent, { type: 'PlaylistCreated' }>;
export type PlaylistRenamed = Extract<PlaylistEvent, { type: 'PlaylistRenamed' }>;
export type PlaylistDeleted = Extract<PlaylistEvent, { type: 'PlaylistDeleted' }>;
export type BookmarkAdded = Extract<PlaylistEvent, { type: 'BookmarkAdded' }>;
export type BookmarksRemoved = Extract<PlaylistEvent, { type: 'BookmarksRemoved' }>;

export const PLAYLISTS_STREAM_PREFIX = 'playlists-';

/** One stream per user for all of its playlists; user ids are opaque (never an e-mail or a name). */
export const playlistsStreamId = (userId: string) => `${PLAYLISTS_STREAM_PREFIX}${userId}`;
export const userIdOfPlaylistsStream = (streamId: string) => streamId.slice(PLAYLISTS_STREAM_PREFIX.length);

/** Maps stored events to the current shapes. All events are still at version 1, so this is the identity. */
export function upcast(type: string, data: Record<string, unknown>): PlaylistEvent {
  return { type, data } as PlaylistEvent;
}
