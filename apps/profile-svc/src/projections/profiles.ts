import { type PublicProfile, profileEvents } from '@udp/contracts';
import type { EventStore } from '@udp/eventstore';
import { type Projection, aggregateProjection, domainEventOf } from '@udp/eventsourcing';
import type { Collection, ReadModelStore, Sealing } from '@udp/readmodel';
import { type ProfileState, profileStream, profileStreams } from '../domain/aggregate';
import { publicView } from '../domain/public-view';

/** The owner's profile, by user id: the profile as its last event carried it. */
export interface ProfileRow extends ProfileState {
  _id: string;
  revision: number;
}

/**
 * The profile a row holds, in the current shape: a row applied before a field existed is read as its event would be
 * now (ProfileState gives the field its default), so no view mends it. The row's `_id` and `revision` are left out.
 */
export const profileOfRow = (row: ProfileRow): ProfileState => profileEvents.ProfileState.parse(row);

/**
 * The public profiles, by public user id: only the view others may see is stored here (null while the
 * profile is not public), so the public lookup can never leak a private field.
 */
export interface PublicProfileRow {
  _id: string;
  /** Whose it is: a store that seals keeps it with their key (never answered: the view is). */
  userId: string;
  view: PublicProfile | null;
  revision: number;
}

export const PROFILES = 'profiles';
export const PUBLIC_PROFILES = 'public_profiles';

/**
 * How a store that seals (PostgreSQL) keeps profiles (docs/erasure.md): a profile by its user's id, queried by it
 * alone; a public profile under its public id, which anyone may look up (kept hashed with the store's key).
 */
export const PROFILE_SEALING: Sealing = { ownerOfId: (userId) => userId, fields: {} };
export const PUBLIC_PROFILE_SEALING: Sealing = { ownerField: 'userId', fields: { userId: 'owner' } };

export const profileRows = (readModels: ReadModelStore): Collection<ProfileRow> => readModels.collection<ProfileRow>(PROFILES);
export const publicProfileRows = (readModels: ReadModelStore): Collection<PublicProfileRow> =>
  readModels.collection<PublicProfileRow>(PUBLIC_PROFILES);

/**
 * Every read-model document of a user (erasure deletes them): the profile, and the public profile under every
 * public user id the profile ever had (from its events; from the stored row when the stream is already gone).
 */
export function profileDocumentsOfUser(readModels: ReadModelStore, store: EventStore) {
  return async (userId: string) => {
    const publicIds = new Set<string>();
    const row = await profileRows(readModels).get(userId);
    if (row?.publicUserId) publicIds.add(row.publicUserId);
    const stream = profileStream(userId);
    for (const e of (await store.readStream(stream.id)).events)
      publicIds.add(domainEventOf(profileStreams, e, stream.owner).data.profile.publicUserId);
    return [
      { collection: PROFILES, filter: { _id: userId } },
      { collection: PUBLIC_PROFILES, filter: { _id: { $in: [...publicIds] } } },
    ];
  };
}

/** Both events carry the whole profile: each update is an upsert conditional on the stream revision. */
export function profileProjection(readModels: ReadModelStore): Projection {
  const profiles = profileRows(readModels);
  const publicProfiles = publicProfileRows(readModels);
  return aggregateProjection({
    name: 'profiles',
    aggregate: profileStreams,
    async apply({ data: { profile } }, { id: userId, revision }) {
      await profiles.upsertIfNewer({ ...profile, _id: userId, revision });
      await publicProfiles.upsertIfNewer({ _id: profile.publicUserId, userId, view: publicView(profile), revision });
    },
  });
}
