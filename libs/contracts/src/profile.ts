import { EpochMillis, TokenTypeHeader, VISIBLE_NAME_PATTERN } from './common';
import { defineRoute } from './routes/define-route';
import { commonErrors, json, problem, writeErrors } from './routes/helpers';
import { z } from './zod';

/**
 * profile-svc's contract: the profile's fields (declared once, below), the shapes derived from them, and the route
 * table of `/api/profile/v3`. The events that store the profile are in events/profile.ts.
 */

/**
 * Sent by a worker that reads a profile on a user's behalf (the export-worker): the read answers 404 when the user
 * has no profile instead of creating one, so that no worker brings an erased user back.
 */
export const PROFILE_NO_CREATE_HEADER = 'x-udp-no-create';

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

/** A field the user fills in: how a change to it is validated, and what the owner's answer says of it (if anything). */
const field = (change: z.ZodType<string, string>, description?: string) => ({ change, description });

/**
 * The fields a user fills in, declared once; every shape below is derived from this list. Each is text, null until
 * the user sets it (in a new profile, and in an event stored before the field existed), editable, and may be shown on
 * the public profile. Adding one: docs/contributing.md, "Add a field".
 */
const PROFILE_FIELDS = {
  displayName: field(name('displayName', 100)),
  firstName: field(name('firstName', 100)),
  lastName: field(name('lastName', 100)),
  language: field(Language, 'BCP 47 language tag'),
  avatarUrl: field(AvatarUrl),
};
export type ProfileField = keyof typeof PROFILE_FIELDS;

/** One value per profile field, in their declared order (the order of the answers and of stored events). */
export function byProfileField<T>(valueOf: (field: ProfileField) => T): Record<ProfileField, T> {
  return Object.fromEntries(Object.keys(PROFILE_FIELDS).map((key) => [key, valueOf(key as ProfileField)])) as Record<ProfileField, T>;
}

/** The profile fields a user may show on the public profile: all of them. */
export const PROFILE_PUBLIC_FIELDS: readonly ProfileField[] = Object.keys(PROFILE_FIELDS) as ProfileField[];
export const ProfilePublicField = z.enum(PROFILE_PUBLIC_FIELDS, { message: `must be one of ${PROFILE_PUBLIC_FIELDS.join(', ')}` });
export type ProfilePublicField = z.infer<typeof ProfilePublicField>;

/**
 * The whole profile as stored (both profile events carry it, and the read model's row holds it). A field an older
 * event lacks is read as null here, where every stored event is parsed, so nothing after the parse mends it.
 */
export const ProfileState = z.object({
  publicUserId: z.string(),
  ...byProfileField(() => z.string().nullable().default(null)),
  public: z.boolean(),
  publicFields: z.array(ProfilePublicField),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
});
export type ProfileState = z.infer<typeof ProfileState>;

/** The user's own profile. Fields the user never set are null. */
export const Profile = z
  .object({
    publicUserId: z.string().openapi({ description: 'UUID v4, created with the profile; addresses the public profile' }),
    ...byProfileField((key) => {
      const { description } = PROFILE_FIELDS[key];
      return description ? z.string().nullable().openapi({ description }) : z.string().nullable();
    }),
    public: z.boolean().openapi({ description: 'whether the public profile can be read by others' }),
    publicFields: z.array(ProfilePublicField).openapi({ description: 'the fields the public profile shows' }),
    createdAt: EpochMillis,
    updatedAt: EpochMillis,
  })
  .openapi('Profile');
export type Profile = z.infer<typeof Profile>;

/** What others see: the public user id and only the fields the user made public (and has set). */
export const PublicProfile = z
  .object({ publicUserId: z.string(), ...byProfileField(() => z.string().optional()) })
  .openapi('PublicProfile');
export type PublicProfile = z.infer<typeof PublicProfile>;

/** A change to the profile: fields left out are kept, `null` clears a field. Unknown fields are ignored. */
export const UpdateProfileData = z
  .object({
    ...byProfileField((key) => PROFILE_FIELDS[key].change.nullable().optional()),
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
/** What an update may change: every field of the change command. */
export const PROFILE_EDITABLE_FIELDS = UpdateProfileData.keyof().options;

export const PublicUserIdParam = z.object({
  publicUserId: z
    .string()
    .regex(
      /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$/,
      'publicUserId must be a UUID version 4',
    )
    .transform((s) => s.toLowerCase()),
});

// ---- routes --------------------------------------------------------------------------------------------------

const tags = ['profile'];
const headers = z.object({
  'Token-Type': TokenTypeHeader.optional(),
});

/** profile-svc: `/api/profile/v3`. */
export const profileApi = {
  read: defineRoute({
    operationId: 'getProfile',
    method: 'get',
    path: '/api/profile/v3',
    tags,
    summary: "The caller's profile (created on the first call)",
    request: { headers },
    responses: { 200: json(Profile, 'the profile'), ...commonErrors },
  }),
  update: defineRoute({
    operationId: 'updateProfile',
    method: 'put',
    path: '/api/profile/v3',
    tags,
    summary: 'Update the profile: fields left out are kept, null clears one',
    request: { headers, body: UpdateProfileData },
    responses: { 200: json(Profile, 'the updated profile'), ...writeErrors, 429: problem('concurrent updates; see Retry-After') },
  }),
  readPublic: defineRoute({
    operationId: 'getPublicProfile',
    method: 'get',
    path: '/api/profile/v3/public/{publicUserId}',
    tags,
    summary: 'A public profile: only the fields its owner made public',
    request: { params: PublicUserIdParam },
    responses: {
      200: json(PublicProfile, 'the public profile'),
      ...commonErrors,
      404: problem('no such public profile, or it is not public'),
      409: problem('public profiles are switched off'),
    },
  }),
};
