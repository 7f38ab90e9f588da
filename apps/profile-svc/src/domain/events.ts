import type { profileEvents } from '@udp/contracts';
import { STREAM_CATEGORIES, ownedStream, profileStreamId, userIdOfStream } from '@udp/eventsourcing';

/**
 * The events of one user's profile. Their schemas are in libs/contracts/src/events/profile.ts, with every event schema
 * (docs/architecture.md, "Event sourcing rules").
 */
export type ProfileEvent = profileEvents.ProfileEvent;
export type ProfileState = profileEvents.ProfileState;

export const PROFILE_STREAM_PREFIX = STREAM_CATEGORIES.profile;

/** One stream per user (`profile-<userId>`, the id encoded); user ids are opaque (never an e-mail or a name). */
export { profileStreamId };
export const profileStream = (userId: string) => ownedStream(profileStreamId(userId), { userId });
export const userIdOfProfileStream = (streamId: string) => userIdOfStream(PROFILE_STREAM_PREFIX, streamId);
/** Every stream of a user in this service (erasure deletes them). */
export const profileStreamsOfUser = (userId: string) => [profileStreamId(userId)];

/** Maps stored events to the current shapes. All events are still at version 1, so this is the identity. */
export function upcast(type: string, data: Record<string, unknown>): ProfileEvent {
  return { type, data } as ProfileEvent;
}
