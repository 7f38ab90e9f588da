import type { profileEvents } from '@udp/contracts';

/** The events of one user's profile; schemas live in the contracts library. */
export type ProfileEvent = profileEvents.ProfileEvent;
export type ProfileState = profileEvents.ProfileState;

export const PROFILE_STREAM_PREFIX = 'profile-';

/** One stream per user; user ids are opaque (never an e-mail or a name). */
export const profileStreamId = (userId: string) => `${PROFILE_STREAM_PREFIX}${userId}`;
export const userIdOfProfileStream = (streamId: string) => streamId.slice(PROFILE_STREAM_PREFIX.length);

/** Maps stored events to the current shapes. All events are still at version 1, so this is the identity. */
export function upcast(type: string, data: Record<string, unknown>): ProfileEvent {
  return { type, data } as ProfileEvent;
}
