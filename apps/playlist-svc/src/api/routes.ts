import { Router } from 'express';
import type { CommandHandler } from '@udp/eventsourcing';
import type { Collection } from '@udp/readmodel';
import type { PlaylistCommand, PlaylistsState } from '../domain/decider';
import type { PlaylistEvent } from '../domain/aggregate';
import type { PlaylistDocument } from '../projections/playlists';
import { playlistV2Routes } from './routes-v2';
import { playlistV3Routes } from './routes-v3';

/** What the routes of each API version need. */
export interface PlaylistRouteDeps {
  /** The playlists aggregate's command handler (app.ts); it answers with the playlists as the write left them. */
  handle: CommandHandler<PlaylistCommand, PlaylistEvent, PlaylistsState, string>;
  documents: Collection<PlaylistDocument>;
  /** Technical ids of new playlists. */
  newId: () => string;
}

/** HTTP <-> commands and queries: one data set, two API versions (v2 and v3, a file each). */
export function playlistRoutes(deps: PlaylistRouteDeps): Router {
  return Router().use(playlistV2Routes(deps), playlistV3Routes(deps));
}

/** Whether a write added the bookmark of `itemId` to the playlist (else it was there already: 200, not 201). */
export const addedBookmark = (events: PlaylistEvent[], playlistId: string, itemId: string) =>
  events.some((e) => e.type === 'BookmarkAdded' && e.data.playlistId === playlistId && e.data.itemId === itemId);
