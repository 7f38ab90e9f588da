import type { Decider } from '@udp/eventsourcing';
import { type Snapshotting, type StreamStateCache, type Unstamped, type WriteSide, handleCommandVisibly } from '@udp/eventsourcing';
import { type PlaylistCommand, type Playlist, type PlaylistRef, type PlaylistsState, evolveAll, findPlaylist } from '../domain/decider';
import { type PlaylistEvent, playlistsStream } from '../domain/events';

export interface PlaylistWriteDeps {
  write: WriteSide;
  decider: Decider<PlaylistCommand, PlaylistEvent, PlaylistsState>;
  now: () => number;
  /** Re-reads and re-decides this many times when another request changed the user's playlists meanwhile. */
  conflictRetries: number;
  /** Folded playlists by user, so a write reads only what is new. */
  states?: StreamStateCache<PlaylistsState>;
  /** Saved playlists, so a write on a user not in `states` reads only what is newer than the snapshot. */
  snapshots?: Snapshotting<PlaylistsState>;
}

export interface Outcome {
  events: PlaylistEvent[];
  /** The playlists as the write left them (the read model shows the same once the answer is sent). */
  state: PlaylistsState;
  /** The playlist the command addressed, as it is now (exists: the command did not throw). */
  playlist(ref: PlaylistRef): Playlist;
  /** Whether this command added the bookmark of `itemId` to the playlist (else it was there already). */
  addedItem(playlistId: string, itemId: string): boolean;
}

/** Runs one command on the user's playlists (stream `playlists-<userId>`) and answers the resulting state. */
export function playlistWrites({ write, decider, now, conflictRetries, states, snapshots }: PlaylistWriteDeps) {
  return async (userId: string, command: Unstamped<PlaylistCommand>): Promise<Outcome> => {
    const full = { ...command, metadata: { now: now() } };
    const { events, stateBefore } = await handleCommandVisibly(write, playlistsStream(userId), decider, full, {
      retries: conflictRetries,
      cache: states,
      snapshots,
    });
    const state = evolveAll(stateBefore, events);
    return {
      events,
      state,
      playlist: (ref) => findPlaylist(state, ref)!,
      addedItem: (playlistId, itemId) =>
        events.some((e) => e.type === 'BookmarkAdded' && e.data.playlistId === playlistId && e.data.itemId === itemId),
    };
  };
}

export type ExecutePlaylistCommand = ReturnType<typeof playlistWrites>;
