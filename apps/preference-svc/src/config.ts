import { PREFERENCE_LIMITS } from '@udp/contracts';
import { commonConfigSchema, z } from '@udp/config';

/** preference-svc settings: the common ones plus the limits of a preference (docs/preference-svc.md). */
export const preferenceConfigSchema = commonConfigSchema.extend({
  PREFERENCE_MAX_DOCUMENT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(16 * 1024 * 1024)
    .default(PREFERENCE_LIMITS.maxDocumentBytes),
  PREFERENCE_MAX_KEY_LENGTH: z.coerce.number().int().min(1).max(1024).default(PREFERENCE_LIMITS.maxKeyLength),
  PREFERENCE_MAX_PATH_DEPTH: z.coerce.number().int().min(1).max(256).default(PREFERENCE_LIMITS.maxPathDepth),
  PREFERENCE_MAX_JSONPATH_STEPS: z.coerce.number().int().min(100).max(100_000_000).default(PREFERENCE_LIMITS.maxJsonPathSteps),
  PREFERENCE_MAX_JSONPATH_RESULT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(256 * 1024 * 1024)
    .default(PREFERENCE_LIMITS.maxJsonPathResultBytes),
  /** Per-user quotas (422 past them): keys, and bytes of all the user's documents together. */
  PREFERENCE_MAX_KEYS: z.coerce.number().int().min(1).max(1_000_000).default(PREFERENCE_LIMITS.maxKeys),
  PREFERENCE_MAX_USER_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024 * 1024)
    .default(PREFERENCE_LIMITS.maxUserBytes),
  PREFERENCE_WRITE_RETRIES: z.coerce.number().int().min(0).max(1000).default(25),
});
export type PreferenceConfig = z.infer<typeof preferenceConfigSchema>;
