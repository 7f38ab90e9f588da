import { randomUUID } from 'node:crypto';
import { PLAYLIST_LIMITS } from '@udp/contracts';
import { internalReadRoutes, serviceHttpApp } from '@udp/http-kit';
import {
  SNAPSHOTS_COLLECTION,
  serviceStateCache,
  startServiceProjections,
  type ServiceApp,
  type ServiceDeps,
  type SnapshotDeps,
} from '@udp/runtime';
import { playlistChanges } from './api/changes-route';
import { playlistRoutes } from './api/routes';
import type { PlaylistLimits } from './domain/decider';
import { playlistChangesPublisher } from './projections/playlist-changes';
import { playlistStreamsOfUser, playlistsAggregate, playlistsStreams } from './domain/aggregate';
import {
  PLAYLISTS_COLLECTION,
  PLAYLIST_SEALING,
  playlistDocumentsOfUser,
  playlistDocuments,
  playlistsProjection,
} from './projections/playlists';

export interface PlaylistServiceDeps extends ServiceDeps, SnapshotDeps {
  limits?: Partial<PlaylistLimits>;
  /** Re-decisions after a concurrent change before answering 429 (default 10). */
  conflictRetries?: number;
  /** Technical ids of new playlists (default: UUID v4). */
  newId?: () => string;
  /** How many users' folded playlists are kept in memory for writes (least recently used dropped). */
  cachedStates?: number;
}

/** Everything playlist-svc is, given its adapters: tests build it on memory adapters in one line. */
export async function createPlaylistService(deps: PlaylistServiceDeps): Promise<ServiceApp> {
  const { readModels, bus } = deps;
  // Before any of them is used: a store that seals keeps them so (docs/erasure.md, "PostgreSQL").
  readModels.seal?.(PLAYLISTS_COLLECTION, PLAYLIST_SEALING);
  readModels.seal?.(SNAPSHOTS_COLLECTION, { ownerOfId: (streamId) => playlistsStreams.idOf(streamId), fields: {} });
  await readModels.ensureIndex(PLAYLISTS_COLLECTION, { userId: 1, businessId: 1 });
  const aggregate = playlistsAggregate(
    {
      maxPlaylists: deps.limits?.maxPlaylists ?? PLAYLIST_LIMITS.maxPlaylists,
      maxBookmarks: deps.limits?.maxBookmarks ?? PLAYLIST_LIMITS.maxBookmarks,
    },
    deps.conflictRetries ?? 10,
  );
  // Folded states in memory and as snapshots: an erased user's are forgotten, all saved at stop.
  const foldedStates = serviceStateCache(deps, aggregate, deps.cachedStates);
  const projections = await startServiceProjections(deps, {
    service: 'playlist-svc',
    projection: playlistsProjection(readModels),
    // Each user's own rows: applied inline from the append in one process (no wait on a projector).
    inline: true,
    publisher: playlistChangesPublisher(bus),
    publishesChangesOnly: true,
    erasure: { streamsOfUser: playlistStreamsOfUser, documentsOfUser: playlistDocumentsOfUser },
    states: foldedStates,
  });

  const changes = playlistChanges(playlistDocuments(readModels));
  const app = serviceHttpApp({
    ...projections.httpOptions,
    maxBodyBytes: deps.maxBodyBytes ?? 4 * 1024 * 1024,
    routes: [
      playlistRoutes({
        handle: projections.commandHandler(aggregate, foldedStates),
        documents: playlistDocuments(readModels),
        newId: deps.newId ?? randomUUID,
      }),
      internalReadRoutes(changes),
    ],
  });
  return { app, internal: changes, stop: projections.stop };
}
