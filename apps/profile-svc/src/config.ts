import { commonConfigSchema, z } from '@udp/config';

/** profile-svc settings: the common ones plus the public-profile switch (docs/profile-svc.md). */
export const profileConfigSchema = commonConfigSchema.extend({
  /** false switches public profiles off: their lookup answers 409. */
  PROFILE_PUBLIC_ENABLED: z
    .enum(['true', 'false'], { message: 'PROFILE_PUBLIC_ENABLED must be true or false' })
    .default('true')
    .transform((v) => v === 'true'),
  /** Profiles are small: a larger body is refused with 413. */
  PROFILE_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024)
    .default(64 * 1024),
});
export type ProfileConfig = z.infer<typeof profileConfigSchema>;
