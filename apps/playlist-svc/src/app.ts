import { randomUUID } from 'node:crypto';
import { PLAYLIST_LIMITS } from '@udp/contracts';
import { type StreamStateCache, writeSide } from '@udp/eventsourcing';
import { serviceHttpApp } from '@udp/http-kit';
import { serviceFoldedStates, startServiceProjections, type ServiceApp, type ServiceDeps, type SnapshotDeps } from '@udp/runtime';
import { playlistRoutes } from './api/routes';
import { type PlaylistLimits, type PlaylistsState, playlistsDecider } from './domain/decider';
import { playlistsSnapshot } from './domain/snapshot';
import { playlistChangesPublisher } from './projections/playlist-changes';
import { playlistStreamsOfUser } from './domain/events';
import { PLAYLISTS_COLLECTION, playlistDocumentsOfUser, playlistDocuments, playlistsProjection } from './projections/playlists';

export interface PlaylistServiceDeps extends ServiceDeps, SnapshotDeps {
  limits?: Partial<PlaylistLimits>;
  /** Re-decisions after a concurrent change before answering 429 (default 10). */
  conflictRetries?: number;
  /** Technical ids of new playlists (default: UUID v4). */
  newId?: () => string;
  /** How many users' folded playlists are kept in memory for writes (least recently used dropped). */
  cachedStates?: number;
}

export interface PlaylistService extends ServiceApp {
  /** Folded playlists by stream: erasing a user forgets theirs. */
  states: StreamStateCache<PlaylistsState>;
}

/** Everything playlist-svc is, given its adapters: tests build it on memory adapters in one line. */
export async function createPlaylistService(deps: PlaylistServiceDeps): Promise<PlaylistService> {
  const { store, readModels, bus, identity, logger } = deps;
  await readModels.ensureIndex(PLAYLISTS_COLLECTION, { userId: 1, businessId: 1 });
  const folded = serviceFoldedStates(deps, { codec: playlistsSnapshot, cached: deps.cachedStates });
  const { cache: states, snapshots } = folded;
  const projections = await startServiceProjections(deps, {
    service: 'playlist-svc',
    projection: playlistsProjection(readModels),
    publisher: playlistChangesPublisher(bus),
    erasure: { streamsOfUser: playlistStreamsOfUser, documentsOfUser: playlistDocumentsOfUser },
    states: folded,
  });

  const decider = playlistsDecider({
    maxPlaylists: deps.limits?.maxPlaylists ?? PLAYLIST_LIMITS.maxPlaylists,
    maxBookmarks: deps.limits?.maxBookmarks ?? PLAYLIST_LIMITS.maxBookmarks,
  });

  const app = serviceHttpApp({
    logger,
    maxBodyBytes: deps.maxBodyBytes ?? 4 * 1024 * 1024,
    health: { store, readModels, bus, projectors: projections.projectors },
    maxProjectionLagSeconds: deps.projectionMaxLagSeconds,
    identity,
    routes: [
      playlistRoutes({
        write: writeSide(store, projections.projector, deps.readYourWritesTimeoutMs, logger, readModels),
        decider,
        now: deps.now ?? Date.now,
        conflictRetries: deps.conflictRetries ?? 10,
        states,
        snapshots,
        documents: playlistDocuments(readModels),
        newId: deps.newId ?? randomUUID,
      }),
    ],
  });
  return { app, states, stop: projections.stop };
}
