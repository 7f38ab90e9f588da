import { randomUUID } from 'node:crypto';
import { Router, type Response } from 'express';
import { PROFILE_NO_CREATE_HEADER, type Profile, profileApi } from '@udp/contracts';
import { handleCommandVisibly, notFound, type WriteSide, type Unstamped } from '@udp/eventsourcing';
import { HttpError, mountRoute, userIdOf } from '@udp/http-kit';
import type { Collection } from '@udp/readmodel';
import { type ProfileCommand, evolve, profileDecider } from '../domain/decider';
import { profileStream } from '../domain/events';
import { ownerView } from '../domain/public-view';
import type { ProfileRow, PublicProfileRow } from '../projections/profiles';

export interface ProfileRouteDeps {
  write: WriteSide;
  profiles: Collection<ProfileRow>;
  publicProfiles: Collection<PublicProfileRow>;
  /** false: the public profile lookup answers 409 (PROFILE_PUBLIC_ENABLED). */
  publicProfilesEnabled: boolean;
  now: () => number;
}

/** Two first calls of one user may race to create the profile: the loser re-reads and finds it. */
const RETRIES = { retries: 5 };

/** HTTP <-> commands and queries for `/api/profile/v3`. */
export function profileRoutes({ write, profiles, publicProfiles, publicProfilesEnabled, now }: ProfileRouteDeps): Router {
  const router = Router();

  /** Runs a command; answers the profile as it is after it (from the stream, so it is never stale). */
  const execute = async (res: Response, command: Unstamped<ProfileCommand>): Promise<Profile> => {
    const userId = userIdOf(res);
    const result = await handleCommandVisibly(
      write,
      profileStream(userId),
      profileDecider,
      { ...command, metadata: { now: now() } },
      RETRIES,
    );
    const { profile } = result.events.reduce(evolve, result.stateBefore);
    return ownerView(profile!);
  };

  mountRoute(router, profileApi.read, async (_input, req, res) => {
    const stored = await profiles.get(userIdOf(res));
    if (stored) {
      const { _id: _userId, revision: _revision, ...profile } = stored;
      return void res.json(ownerView(profile));
    }
    // A worker reading on the user's behalf (an export) creates nothing: it must not bring an erased user back.
    if (req.headers[PROFILE_NO_CREATE_HEADER] !== undefined) throw notFound('the user has no profile');
    // The first authenticated call creates the profile, with a new public user id.
    res.json(await execute(res, { type: 'EnsureProfile', data: { publicUserId: randomUUID() } }));
  });

  mountRoute(router, profileApi.update, async ({ body: changes }, _req, res) => {
    res.json(await execute(res, { type: 'UpdateProfile', data: { publicUserId: randomUUID(), changes } }));
  });

  mountRoute(router, profileApi.readPublic, async ({ params: { publicUserId } }, _req, res) => {
    if (!publicProfilesEnabled) throw new HttpError(409, 'Conflict', 'public profiles are switched off on this service');
    const row = await publicProfiles.get(publicUserId);
    // Unknown, or not public: the same answer, so a private profile's existence is not revealed.
    if (!row?.view) throw notFound(`no public profile ${publicUserId}`);
    res.json(row.view);
  });

  return router;
}
