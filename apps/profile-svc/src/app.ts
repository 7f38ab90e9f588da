import type { Express } from 'express';
import type { InternalIdentity } from '@udp/auth';
import { Projector, writeSide } from '@udp/eventsourcing';
import type { EventStore } from '@udp/eventstore';
import { createServiceApp, finish, requireIdentity, healthRoute } from '@udp/http-kit';
import type { ReadModelStore } from '@udp/readmodel';
import type { Logger } from '@udp/telemetry';
import { profileRoutes } from './api/routes';
import { profileProjection, profileRows, publicProfileRows } from './projections/profiles';

export interface ProfileServiceDeps {
  store: EventStore;
  readModels: ReadModelStore;
  identity: InternalIdentity;
  logger: Logger;
  now?: () => number;
  readYourWritesTimeoutMs?: number;
  maxBodyBytes?: number;
  /** false: public profiles are switched off and their lookup answers 409. */
  publicProfilesEnabled?: boolean;
}

export interface ProfileService {
  app: Express;
  stop(): Promise<void>;
}

/** Everything profile-svc is, given its adapters: tests build it on memory adapters in one line. */
export async function createProfileService(deps: ProfileServiceDeps): Promise<ProfileService> {
  const { store, readModels, identity, logger } = deps;
  const projector = new Projector(store, readModels.checkpoints(), profileProjection(readModels), { logger });
  await projector.start();

  const app = createServiceApp({ logger, maxBodyBytes: deps.maxBodyBytes ?? 64 * 1024 });
  app.get('/health/', healthRoute(() => store.ping(), () => readModels.ping(), () => projector.healthy()));
  app.use(requireIdentity(identity));
  app.use(
    profileRoutes({
      write: writeSide(store, projector, deps.readYourWritesTimeoutMs, logger),
      profiles: profileRows(readModels),
      publicProfiles: publicProfileRows(readModels),
      publicProfilesEnabled: deps.publicProfilesEnabled ?? true,
      now: deps.now ?? Date.now,
    }),
  );
  finish(app);

  return {
    app,
    async stop() {
      await projector.stop();
    },
  };
}
