import type { playlistEvents } from '@udp/contracts';
import { STREAM_CATEGORIES, ownedStream, playlistsStreamId, userIdOfStream } from '@udp/eventsourcing';

/**
 * The events of all the playlists of one user. Their schemas are in libs/contracts/src/events/playlists.ts, beside
 * the bus message that names these types for other consumers (docs/architecture.md, "Event sourcing rules").
 */
export type PlaylistEvent = playlistEvents.PlaylistEvent;
export type PlaylistCreated = Extract<PlaylistEvent, { type: 'PlaylistCreated' }>;
export type PlaylistRenamed = Extract<PlaylistEvent, { type: 'PlaylistRenamed' }>;
export type PlaylistDeleted = Extract<PlaylistEvent, { type: 'PlaylistDeleted' }>;
export type BookmarkAdded = Extract<PlaylistEvent, { type: 'BookmarkAdded' }>;
export type BookmarksRemoved = Extract<PlaylistEvent, { type: 'BookmarksRemoved' }>;

export const PLAYLISTS_STREAM_PREFIX = STREAM_CATEGORIES.playlists;

/** One stream per user for all of its playlists (`playlists-<userId>`, the id encoded); user ids are opaque. */
export { playlistsStreamId };
export const playlistsStream = (userId: string) => ownedStream(playlistsStreamId(userId), { userId });
export const userIdOfPlaylistsStream = (streamId: string) => userIdOfStream(PLAYLISTS_STREAM_PREFIX, streamId);
/** Every stream of a user in this service (erasure deletes them). */
export const playlistStreamsOfUser = (userId: string) => [playlistsStreamId(userId)];

/** Maps stored events to the current shapes. All events are still at version 1, so this is the identity. */
export function upcast(type: string, data: Record<string, unknown>): PlaylistEvent {
  return { type, data } as PlaylistEvent;
}
