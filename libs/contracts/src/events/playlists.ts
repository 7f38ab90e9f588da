import { z } from '../zod';

/**
 * Events of all the playlists of one user (stream `playlists-<userId>`, one decider for them all, so that a
 * per-user bookmark sequence and the per-user limits hold). Each event carries the values it sets, so
 * applying one twice gives the same read model. Version 1 of each; a version 2 will be read by a
 * schema here that accepts both (every stored event is parsed by it).
 */
export const PlaylistCreated = z.object({
  type: z.literal('PlaylistCreated'),
  data: z.object({
    playlistId: z.string(),
    businessId: z.string(),
    name: z.string(),
    playlistType: z.enum(['standard', 'watch_later']),
    /** Server time of the creation. */
    date: z.number().int(),
  }),
});

export const PlaylistRenamed = z.object({
  type: z.literal('PlaylistRenamed'),
  data: z.object({ playlistId: z.string(), name: z.string(), date: z.number().int() }),
});

export const PlaylistDeleted = z.object({
  type: z.literal('PlaylistDeleted'),
  data: z.object({ playlistId: z.string(), date: z.number().int() }),
});

export const BookmarkAdded = z.object({
  type: z.literal('BookmarkAdded'),
  data: z.object({
    playlistId: z.string(),
    bookmarkId: z.number().int(),
    itemId: z.string(),
    /** The bookmark's date: the client's when earlier than the server time, else the server time. */
    date: z.number().int(),
    /** Server time of the change. */
    addedAt: z.number().int(),
  }),
});

export const BookmarksRemoved = z.object({
  type: z.literal('BookmarksRemoved'),
  data: z.object({ playlistId: z.string(), bookmarkIds: z.array(z.number().int()), date: z.number().int() }),
});

export const PlaylistEvent = z.discriminatedUnion('type', [
  PlaylistCreated,
  PlaylistRenamed,
  PlaylistDeleted,
  BookmarkAdded,
  BookmarksRemoved,
]);
export type PlaylistEvent = z.infer<typeof PlaylistEvent>;

/** The topic of playlist changes, for the data-management consumers (documented in the AsyncAPI document). */
export const PLAYLISTS_CHANGES_TOPIC = 'user-data.playlists.v1';

/** Integration event published on topic `user-data.playlists.v1` (key: user id; no item data, no names). */
export const PlaylistsChangedMessage = z.object({
  userId: z.string(),
  type: z.enum(['PlaylistCreated', 'PlaylistRenamed', 'PlaylistDeleted', 'BookmarkAdded', 'BookmarksRemoved']),
  playlistId: z.string(),
  revision: z.number().int(),
  occurredAt: z.number().int(),
});
export type PlaylistsChangedMessage = z.infer<typeof PlaylistsChangedMessage>;
