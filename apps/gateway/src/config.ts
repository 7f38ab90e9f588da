import { DEFAULT_MAX_TOKEN_LIFETIME_S } from '@udp/auth';
import { commonConfigSchema, z } from '@udp/config';
import { parseTrustedCallers } from '@udp/telemetry';

/** Shared with `npm run token`, so that the tokens it prints are within the gateway's limit. */
export const maxTokenLifetime = z.coerce
  .number()
  .int()
  .min(60)
  .max(365 * 24 * 3600)
  .default(DEFAULT_MAX_TOKEN_LIFETIME_S);

const serviceUrl = (port: number) => z.string().url().default(`http://127.0.0.1:${port}`);

/** The gateway's settings: where each service is, and how callers are authenticated. */
export const gatewayConfigSchema = commonConfigSchema.extend({
  HISTORY_SVC_URL: serviceUrl(8081),
  PLAYLIST_SVC_URL: serviceUrl(8082),
  PREFERENCE_SVC_URL: serviceUrl(8083),
  PROFILE_SVC_URL: serviceUrl(8084),
  CATALOGUE_SVC_URL: serviceUrl(8085),
  EXPORT_WORKER_URL: serviceUrl(8086),
  /** HS256 secret for Bearer JWTs; unset (and no JWKS): the embedded dev secret in DATA_DIR. */
  AUTH_JWT_SECRET: z.string().min(32, 'AUTH_JWT_SECRET must be at least 32 characters').optional(),
  AUTH_JWKS_URL: z.string().url().optional(),
  AUTH_JWT_ISSUER: z.string().min(1).optional(),
  AUTH_JWT_AUDIENCE: z.string().min(1).optional(),
  /** Identity-provider userinfo address for `sessionToken` credentials; unset: session tokens are dev JWTs. */
  AUTH_USERINFO_URL: z.string().url().optional(),
  AUTH_USERINFO_ID_FIELD: z.string().min(1).default('sub'),
  /** Longest lifetime of an accepted JWT in seconds (`exp` is required); longer-lived tokens are refused. */
  AUTH_MAX_TOKEN_LIFETIME_S: maxTokenLifetime,
  /**
   * Callers (addresses or CIDR ranges, comma separated) whose W3C trace context the gateway continues; every other
   * caller's request starts a new trace (its traceparent only a link). Default: none.
   */
  TRACE_TRUSTED_CALLERS: z
    .string()
    .default('')
    .superRefine((value, ctx) => {
      try {
        parseTrustedCallers(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
      }
    }),
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(30_000),
});
export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;
