import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import { PROFILE_NO_CREATE_HEADER, profileApi } from '@udp/contracts';
import { type CommandHandler, notFound } from '@udp/eventsourcing';
import { HttpError, mountRoute, userIdOf } from '@udp/http-kit';
import type { Collection } from '@udp/readmodel';
import type { ProfileCommand, State } from '../domain/decider';
import type { ProfileEvent } from '../domain/aggregate';
import { ownerView } from '../domain/public-view';
import { type ProfileRow, type PublicProfileRow, profileOfRow } from '../projections/profiles';

export interface ProfileRouteDeps {
  /** The profile aggregate's command handler (app.ts). */
  handle: CommandHandler<ProfileCommand, ProfileEvent, State, string>;
  profiles: Collection<ProfileRow>;
  publicProfiles: Collection<PublicProfileRow>;
  /** false: the public profile lookup answers 409 (PROFILE_PUBLIC_ENABLED). */
  publicProfilesEnabled: boolean;
}

/** HTTP <-> commands and queries for `/api/profile/v3`. */
export function profileRoutes({ handle, profiles, publicProfiles, publicProfilesEnabled }: ProfileRouteDeps): Router {
  const router = Router();

  mountRoute(router, profileApi.read, async (_input, req, res) => {
    const stored = await profiles.get(userIdOf(res));
    if (stored) return void res.json(ownerView(profileOfRow(stored)));
    // A worker reading on the user's behalf (an export) creates nothing: it must not bring an erased user back.
    if (req.headers[PROFILE_NO_CREATE_HEADER] !== undefined) throw notFound('the user has no profile');
    // The first authenticated call creates the profile, with a new public user id.
    const { newState } = await handle(userIdOf(res), { type: 'EnsureProfile', data: { publicUserId: randomUUID() } });
    res.json(ownerView(newState.profile!));
  });

  mountRoute(router, profileApi.update, async ({ body: changes }, _req, res) => {
    const { newState } = await handle(userIdOf(res), { type: 'UpdateProfile', data: { publicUserId: randomUUID(), changes } });
    res.json(ownerView(newState.profile!));
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
