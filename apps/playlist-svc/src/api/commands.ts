import type { Decider } from '@udp/eventsourcing';
import { handleCommandVisibly, type WriteSide } from '@udp/eventsourcing';
import {
  type PlaylistCommand, type Playlist, type PlaylistRef, type PlaylistsState, evolveAll, findPlaylist,
} from '../domain/decider';
import { type PlaylistEvent, playlistsStreamId } from '../domain/events';

export interface PlaylistWriteDeps {
  write: WriteSide;
  decider: Decider<PlaylistCommand, PlaylistEvent, PlaylistsState>;
  now: () => number;
  /** Re-reads and re-decides this many times when another request changed the user's playlists meanwhile. */
  conflictRetries: number;
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
export function playlistWrites({ write, decider, now, conflictRetries }: PlaylistWriteDeps) {
  return async (userId: string, command: Omit<PlaylistCommand, 'metadata'>): Promise<Outcome> => {
    const full = { ...command, metadata: { now: now() } } as PlaylistCommand;
    const { events, stateBefore } = await handleCommandVisibly(write, playlistsStreamId(userId), decider, full, { retries: conflictRetries });
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
