import { erasureEvents } from '@udp/contracts';
import { commonConfigSchema, z } from '@udp/config';
import { parseAllowedHosts } from './worker/callback';

const serviceUrl = (port: number) => z.string().url().default(`http://127.0.0.1:${port}`);
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `604800000`, `7d`, `12h`, `30m`, `90s`: a duration in milliseconds. */
const duration = (name: string) =>
  z
    .string()
    .trim()
    .regex(/^\d+(ms|s|m|h|d)?$/, `${name} must be milliseconds or a number with s, m, h or d (e.g. 7d)`)
    .transform((s) => {
      const [, n, unit] = /^(\d+)(ms|s|m|h|d)?$/.exec(s)!;
      return Number(n) * UNITS[unit ?? 'ms'];
    });

/** export-worker settings (docs/export-worker.md). */
export const exportConfigSchema = commonConfigSchema.extend({
  HISTORY_SVC_URL: serviceUrl(8081),
  PLAYLIST_SVC_URL: serviceUrl(8082),
  PREFERENCE_SVC_URL: serviceUrl(8083),
  PROFILE_SVC_URL: serviceUrl(8084),
  /** The gateway as clients reach it: the base of `url` and `publicUrl`. */
  EXPORT_PUBLIC_BASE_URL: z.string().url().default('http://localhost:8080'),
  EXPORT_TTL: duration('EXPORT_TTL').default(7 * 86_400_000),
  EXPORT_MAX_PER_USER: z.coerce.number().int().min(1).max(1000).default(10),
  EXPORT_CALLBACK_HOSTS: z
    .string()
    .optional()
    .transform((value, ctx) => {
      try {
        return parseAllowedHosts(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  /** HMAC-SHA256 secret of `X-Signature`; embedded: a file in DATA_DIR/secrets. */
  EXPORT_CALLBACK_SECRET: z.string().min(32, 'EXPORT_CALLBACK_SECRET must be at least 32 characters').optional(),
  EXPORT_CALLBACK_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(6),
  EXPORT_CALLBACK_RETRY_MS: z.coerce.number().int().min(1).max(600_000).default(2000),
  EXPORT_SWEEP_INTERVAL_MS: z.coerce.number().int().min(10).max(86_400_000).default(60_000),
  ERASURE_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  /** How often erasures pending for at least this long are requested again (also at every start). */
  ERASURE_RESUME_INTERVAL_MS: z.coerce.number().int().min(100).max(86_400_000).default(30_000),
  ERASURE_PARTICIPANTS: z
    .string()
    .optional()
    .transform((value) =>
      value
        ? value
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : [...erasureEvents.DEFAULT_ERASURE_PARTICIPANTS],
    ),
});
export type ExportConfig = z.infer<typeof exportConfigSchema>;
