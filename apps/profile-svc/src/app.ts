import { internalReadRoutes, serviceHttpApp } from '@udp/http-kit';
import { startServiceProjections, type ServiceApp, type ServiceDeps } from '@udp/runtime';
import { profileChanges } from './api/changes-route';
import { profileRoutes } from './api/routes';
import { profileAggregate, profileStreamsOfUser } from './domain/aggregate';
import { profileChangesPublisher } from './projections/profile-changes';
import {
  PROFILES,
  PROFILE_SEALING,
  PUBLIC_PROFILES,
  PUBLIC_PROFILE_SEALING,
  profileDocumentsOfUser,
  profileProjection,
  profileRows,
  publicProfileRows,
} from './projections/profiles';

export interface ProfileServiceDeps extends ServiceDeps {
  /** false: public profiles are switched off and their lookup answers 409. */
  publicProfilesEnabled?: boolean;
}

/** Everything profile-svc is, given its adapters: tests build it on memory adapters in one line. */
export async function createProfileService(deps: ProfileServiceDeps): Promise<ServiceApp> {
  const { store, readModels, bus } = deps;
  // Before any of them is used: a store that seals keeps them so (docs/erasure.md, "PostgreSQL").
  readModels.seal?.(PROFILES, PROFILE_SEALING);
  readModels.seal?.(PUBLIC_PROFILES, PUBLIC_PROFILE_SEALING);
  const projections = await startServiceProjections(deps, {
    service: 'profile-svc',
    projection: profileProjection(readModels),
    // Each user's own rows: applied inline from the append in one process (no wait on a projector).
    inline: true,
    publisher: profileChangesPublisher(bus),
    publishesChangesOnly: true,
    erasure: { streamsOfUser: profileStreamsOfUser, documentsOfUser: profileDocumentsOfUser(readModels, store) },
  });

  const changes = profileChanges(profileRows(readModels));
  const app = serviceHttpApp({
    ...projections.httpOptions,
    maxBodyBytes: deps.maxBodyBytes ?? 64 * 1024,
    routes: [
      profileRoutes({
        handle: projections.commandHandler(profileAggregate),
        profiles: profileRows(readModels),
        publicProfiles: publicProfileRows(readModels),
        publicProfilesEnabled: deps.publicProfilesEnabled ?? true,
      }),
      internalReadRoutes(changes),
    ],
  });
  return { app, internal: changes, stop: projections.stop };
}
