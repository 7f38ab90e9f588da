import { EpochMillis, VISIBLE_NAME_PATTERN } from './common';
import { z } from './zod';

/**
 * Sent by a worker that reads a profile on a user's behalf (the export-worker): the read answers 404 when the user
 * has no profile instead of creating one, so that no worker brings an erased user back.
 */
export const PROFILE_NO_CREATE_HEADER = 'x-udp-no-create';

/** The profile fields a user may show on the public profile. */
export const PROFILE_PUBLIC_FIELDS = ['displayName', 'firstName', 'lastName', 'language', 'avatarUrl'] as const;
export const ProfilePublicField = z.enum(PROFILE_PUBLIC_FIELDS, { message: `must be one of ${PROFILE_PUBLIC_FIELDS.join(', ')}` });
export type ProfilePublicField = z.infer<typeof ProfilePublicField>;

const name = (field: string, max: number) =>
  z
    .string()
    .max(max, `${field} is at most ${max} characters`)
    .regex(VISIBLE_NAME_PATTERN, `${field} must not be blank (send null to clear it) nor contain control characters`)
    .transform((s) => s.trim());

/** BCP 47 language tag, e.g. `de`, `fr-CH`, `rm`. */
const Language = z
  .string()
  .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'language must be a BCP 47 language tag such as de or fr-CH')
  .max(35, 'language is at most 35 characters');

/** An absolute http(s) URL: scheme, host name, optional port, then anything without white space or controls. */
const AvatarUrl = z
  .string()
  .max(2048, 'avatarUrl is at most 2048 characters')
  .regex(
    /^https?:\/\/[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})(?::[0-9]{1,5})?(?:[/?#][^\u0000-\u0020\u007f\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]*)?$/,
    'avatarUrl must be an absolute http(s) URL',
  );

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
      .optional()
      .openapi({ uniqueItems: true }),
  })
  .openapi('UpdateProfileData');
export type UpdateProfileData = z.infer<typeof UpdateProfileData>;

export const PublicUserIdParam = z.object({
  publicUserId: z
    .string()
    .regex(
      /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$/,
      'publicUserId must be a UUID version 4',
    )
    .transform((s) => s.toLowerCase()),
});
