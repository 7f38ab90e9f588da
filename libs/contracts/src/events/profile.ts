import { ProfileState } from '../profile';
import { z } from '../zod';

/** The whole profile as stored: declared with the profile's fields (profile.ts), which both events carry. */
export { ProfileState };

/** Events of a user's profile (stream `profile-<userId>`). Version 1; older profiles read as in ProfileState. */
export const ProfileCreated = z.object({ type: z.literal('ProfileCreated'), data: z.object({ profile: ProfileState }) });
export const ProfileUpdated = z.object({
  type: z.literal('ProfileUpdated'),
  data: z.object({ profile: ProfileState, changedFields: z.array(z.string()) }),
});

export const ProfileEvent = z.discriminatedUnion('type', [ProfileCreated, ProfileUpdated]);
export type ProfileEvent = z.infer<typeof ProfileEvent>;

/** The topic of profile changes, for live sync and the data-management consumers (the AsyncAPI document). */
export const PROFILE_CHANGES_TOPIC = 'user-data.profile.v1';

/** Integration event published on topic `user-data.profile.v1` (key: user id; no field of the profile, not even its names). */
export const ProfileChangedMessage = z.object({
  userId: z.string(),
  type: z.enum(['ProfileCreated', 'ProfileUpdated']),
  revision: z.number().int(),
  occurredAt: z.number().int(),
});
export type ProfileChangedMessage = z.infer<typeof ProfileChangedMessage>;
