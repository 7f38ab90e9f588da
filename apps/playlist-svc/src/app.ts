import { randomUUID } from 'node:crypto';
import type { Express } from 'express';
import type { InternalIdentity } from '@udp/auth';
import type { Bus } from '@udp/bus';
import { PLAYLIST_LIMITS } from '@udp/contracts';
import { Projector, writeSide } from '@udp/eventsourcing';
import type { EventStore } from '@udp/eventstore';
import { createServiceApp, finish, requireIdentity, healthRoute } from '@udp/http-kit';
import type { ReadModelStore } from '@udp/readmodel';
import type { Logger } from '@udp/telemetry';
import { playlistWrites } from './api/commands';
import { playlistV2Routes } from './api/v2';
import { playlistV3Routes } from './api/v3';
import { type PlaylistLimits, playlistsDecider } from './domain/decider';
import { playlistChangesPublisher } from './projections/playlist-changes';
import { PLAYLISTS_COLLECTION, playlistDocuments, playlistsProjection } from './projections/playlists';

export interface PlaylistServiceDeps {
  store: EventStore;
  readModels: ReadModelStore;
  bus: Bus;
  identity: InternalIdentity;
  logger: Logger;
  limits?: Partial<PlaylistLimits>;
  /** Re-decisions after a concurrent change before answering 429 (default 10). */
  conflictRetries?: number;
  now?: () => number;
  /** Technical ids of new playlists (default: UUID v4). */
  newId?: () => string;
  readYourWritesTimeoutMs?: number;
  maxBodyBytes?: number;
}

export interface PlaylistService {
  app: Express;
  stop(): Promise<void>;
}

/** Everything playlist-svc is, given its adapters: tests build it on memory adapters in one line. */
export async function createPlaylistService(deps: PlaylistServiceDeps): Promise<PlaylistService> {
  const { store, readModels, bus, identity, logger } = deps;
  await readModels.ensureIndex(PLAYLISTS_COLLECTION, { userId: 1, businessId: 1 });
  const checkpoints = readModels.checkpoints();
  const projector = new Projector(store, checkpoints, playlistsProjection(readModels), { logger });
  const publisher = new Projector(store, checkpoints, playlistChangesPublisher(bus), { logger });
  await projector.start();
  await publisher.start();

  const decider = playlistsDecider({
    maxPlaylists: deps.limits?.maxPlaylists ?? PLAYLIST_LIMITS.maxPlaylists,
    maxBookmarks: deps.limits?.maxBookmarks ?? PLAYLIST_LIMITS.maxBookmarks,
  });
  const execute = playlistWrites({
    write: writeSide(store, projector, deps.readYourWritesTimeoutMs, logger),
    decider,
    now: deps.now ?? Date.now,
    conflictRetries: deps.conflictRetries ?? 10,
  });
  const routeDeps = { execute, documents: playlistDocuments(readModels), newId: deps.newId ?? randomUUID };

  const app = createServiceApp({ logger, maxBodyBytes: deps.maxBodyBytes ?? 4 * 1024 * 1024 });
  app.get('/health/', healthRoute(() => store.ping(), () => readModels.ping(), () => projector.healthy()));
  app.use(requireIdentity(identity));
  app.use(playlistV2Routes(routeDeps));
  app.use(playlistV3Routes(routeDeps));
  finish(app);

  return {
    app,
    async stop() {
      await publisher.stop();
      await projector.stop();
    },
  };
}
