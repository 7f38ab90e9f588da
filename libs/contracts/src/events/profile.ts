import { z } from '../zod';

/** The whole profile as stored; both events carry it, so the projections are a plain upsert by revision. */
export const ProfileState = z.object({
  publicUserId: z.string(),
  displayName: z.string().nullable(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  language: z.string().nullable(),
  avatarUrl: z.string().nullable(),
  public: z.boolean(),
  publicFields: z.array(z.enum(['displayName', 'firstName', 'lastName', 'language', 'avatarUrl'])),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
});
export type ProfileState = z.infer<typeof ProfileState>;

/** Events of a user's profile (stream `profile-<userId>`). Version 1. */
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
