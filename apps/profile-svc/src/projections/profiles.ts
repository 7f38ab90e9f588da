import type { PublicProfile } from '@udp/contracts';
import type { RecordedEvent } from '@udp/eventstore';
import type { Projection } from '@udp/eventsourcing';
import type { Collection, ReadModelStore } from '@udp/readmodel';
import { PROFILE_STREAM_PREFIX, type ProfileState, upcast, userIdOfProfileStream } from '../domain/events';
import { publicView } from '../domain/public-view';

/** The owner's profile, by user id. */
export interface ProfileRow extends ProfileState {
  _id: string;
  revision: number;
}

/**
 * The public profiles, by public user id: only the view others may see is stored here (null while the
 * profile is not public), so the public lookup can never leak a private field.
 */
export interface PublicProfileRow {
  _id: string;
  view: PublicProfile | null;
  revision: number;
}

export const PROFILES = 'profiles';
export const PUBLIC_PROFILES = 'public_profiles';

export const profileRows = (readModels: ReadModelStore): Collection<ProfileRow> => readModels.collection<ProfileRow>(PROFILES);
export const publicProfileRows = (readModels: ReadModelStore): Collection<PublicProfileRow> => readModels.collection<PublicProfileRow>(PUBLIC_PROFILES);

/** Both events carry the whole profile: each update is an upsert conditional on the stream revision. */
export function profileProjection(readModels: ReadModelStore): Projection {
  const profiles = profileRows(readModels);
  const publicProfiles = publicProfileRows(readModels);
  return {
    name: 'profiles',
    streamPrefixes: [PROFILE_STREAM_PREFIX],
    async apply(recorded: RecordedEvent) {
      const { profile } = upcast(recorded.type, recorded.data).data;
      const revision = recorded.revision;
      await profiles.upsertIfNewer({ ...profile, _id: userIdOfProfileStream(recorded.streamId), revision });
      await publicProfiles.upsertIfNewer({ _id: profile.publicUserId, view: publicView(profile), revision });
    },
  };
}
