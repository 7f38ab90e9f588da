import { Router } from 'express';
import type { Decider } from '@udp/eventsourcing';
import { type Snapshotting, type StreamStateCache, type Unstamped, type WriteSide, handleCommandVisibly } from '@udp/eventsourcing';
import type { Collection } from '@udp/readmodel';
import { type PlaylistCommand, type Playlist, type PlaylistRef, type PlaylistsState, evolveAll, findPlaylist } from '../domain/decider';
import { type PlaylistEvent, playlistsStream } from '../domain/events';
import type { PlaylistDocument } from '../projections/playlists';
import { playlistV2Routes } from './routes-v2';
import { playlistV3Routes } from './routes-v3';

export interface PlaylistRouteDeps {
  write: WriteSide;
  decider: Decider<PlaylistCommand, PlaylistEvent, PlaylistsState>;
  now: () => number;
  /** Re-reads and re-decides this many times when another request changed the user's playlists meanwhile. */
  conflictRetries: number;
  /** Folded playlists by user, so a write reads only what is new. */
  states?: StreamStateCache<PlaylistsState>;
  /** Saved playlists, so a write on a user not in `states` reads only what is newer than the snapshot. */
  snapshots?: Snapshotting<PlaylistsState>;
  documents: Collection<PlaylistDocument>;
  /** Technical ids of new playlists. */
  newId: () => string;
}

/** What a write answers from: the events it appended and the playlists as it left them (the read model shows the same once the answer is sent). */
export interface Outcome {
  events: PlaylistEvent[];
  /** The playlist the command addressed, as it is now (exists: the command did not throw). */
  playlist(ref: PlaylistRef): Playlist;
  /** Whether this command added the bookmark of `itemId` to the playlist (else it was there already). */
  addedItem(playlistId: string, itemId: string): boolean;
}

/** Runs one command on the user's playlists (stream `playlists-<userId>`). */
export type ExecutePlaylistCommand = (userId: string, command: Unstamped<PlaylistCommand>) => Promise<Outcome>;

/** What the routes of each API version need. */
export interface PlaylistVersionDeps {
  execute: ExecutePlaylistCommand;
  documents: Collection<PlaylistDocument>;
  newId: () => string;
}

/** HTTP <-> commands and queries: one data set, two API versions (v2 and v3, a file each). */
export function playlistRoutes({ write, decider, now, conflictRetries, states, snapshots, documents, newId }: PlaylistRouteDeps): Router {
  /** A conflicting append is re-read and re-decided (docs/architecture.md, "Concurrency"), then 429. */
  const execute: ExecutePlaylistCommand = async (userId, command) => {
    const full = { ...command, metadata: { now: now() } };
    const { events, stateBefore } = await handleCommandVisibly(write, playlistsStream(userId), decider, full, {
      retries: conflictRetries,
      cache: states,
      snapshots,
    });
    const state = evolveAll(stateBefore, events);
    return {
      events,
      playlist: (ref) => findPlaylist(state, ref)!,
      addedItem: (playlistId, itemId) =>
        events.some((e) => e.type === 'BookmarkAdded' && e.data.playlistId === playlistId && e.data.itemId === itemId),
    };
  };
  const versionDeps = { execute, documents, newId };
  return Router().use(playlistV2Routes(versionDeps), playlistV3Routes(versionDeps));
}
