import { HISTORY_LIMITS } from '@udp/contracts';
import { commonConfigSchema, z } from '@udp/config';

/** history-svc settings: the common ones plus the `trending` aggregate's window and privacy threshold. */
export const historyConfigSchema = commonConfigSchema.extend({
  /** Trending counts the watches of the last TRENDING_WINDOW_MS (default 7 days). */
  TRENDING_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(60_000)
    .max(90 * 24 * 3600 * 1000)
    .default(7 * 24 * 3600 * 1000),
  /** An item is listed as trending only when at least this many distinct users watched it in the window. */
  TRENDING_MIN_USERS: z.coerce.number().int().min(1).max(1_000_000).default(3),
  /** Per-user quota: entries of a history, tombstones included; past it a write of new items answers 422. */
  HISTORY_MAX_ENTRIES: z.coerce.number().int().min(1).max(100_000_000).default(HISTORY_LIMITS.maxEntries),
});
