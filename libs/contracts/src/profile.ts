import { EpochMillis } from './common';
import { z } from './zod';

/** The profile fields a user may show on the public profile. */
export const PROFILE_PUBLIC_FIELDS = ['displayName', 'firstName', 'lastName', 'language', 'avatarUrl'] as const;
export const ProfilePublicField = z.enum(PROFILE_PUBLIC_FIELDS, { message: `must be one of ${PROFILE_PUBLIC_FIELDS.join(', ')}` });
export type ProfilePublicField = z.infer<typeof ProfilePublicField>;

const name = (field: string, max: number) =>
  z
    .string()
    .trim()
    .min(1, `${field} must not be empty (send null to clear it)`)
    .max(max, `${field} is at most ${max} characters`)
    .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), `${field} must not contain control characters`);

/** BCP 47 language tag, e.g. `de`, `fr-CH`, `rm`. */
const Language = z
  .string()
  .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'language must be a BCP 47 language tag such as de or fr-CH')
  .max(35, 'language is at most 35 characters');

const AvatarUrl = z
  .string()
  .max(2048, 'avatarUrl is at most 2048 characters')
  .refine((s) => {
    try {
      return ['https:', 'http:'].includes(new URL(s).protocol);
    } catch {
      return false;
    }
  }, 'avatarUrl must be an absolute http(s) URL');

/** The user's own profile. Fields the user never set are null. */
export const Profile = z
  .object({
    publicUserId: z.string().openapi({ description: 'UUID v4, created with the profile; addresses the public profile' }),
    displayName: z.string().nullable(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    language: z.string().nullable().openapi({ description: 'BCP 47 language tag' }),
    avatarUrl: z.string().nullable(),
    public: z.boolean().openapi({ description: 'whether the public profile can be read by others' }),
    publicFields: z.array(ProfilePublicField).openapi({ description: 'the fields the public profile shows' }),
    createdAt: EpochMillis,
    updatedAt: EpochMillis,
  })
  .openapi('Profile');
export type Profile = z.infer<typeof Profile>;

/** What others see: the public user id and only the fields the user made public (and has set). */
export const PublicProfile = z
  .object({
    publicUserId: z.string(),
    displayName: z.string().optional(),
    firstName: z.string().optional(),
    lastName: z.string().optional(),
    language: z.string().optional(),
    avatarUrl: z.string().optional(),
  })
  .openapi('PublicProfile');
export type PublicProfile = z.infer<typeof PublicProfile>;

/** A change to the profile: fields left out are kept, `null` clears a field. Unknown fields are ignored. */
export const UpdateProfileData = z
  .object({
    displayName: name('displayName', 100).nullable().optional(),
    firstName: name('firstName', 100).nullable().optional(),
    lastName: name('lastName', 100).nullable().optional(),
    language: Language.nullable().optional(),
    avatarUrl: AvatarUrl.nullable().optional(),
    public: z.boolean().optional(),
    publicFields: z
      .array(ProfilePublicField)
      .max(PROFILE_PUBLIC_FIELDS.length)
      .refine((fields) => new Set(fields).size === fields.length, 'publicFields must not repeat a field')
      .optional(),
  })
  .openapi('UpdateProfileData');
export type UpdateProfileData = z.infer<typeof UpdateProfileData>;

export const PublicUserIdParam = z.object({
  publicUserId: z
    .string()
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i, 'publicUserId must be a UUID version 4')
    .transform((s) => s.toLowerCase()),
});
