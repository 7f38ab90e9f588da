import { commonConfigSchema, z } from '@udp/config';

const serviceUrl = (port: number) => z.string().url().default(`http://127.0.0.1:${port}`);

/** The gateway's settings: where each service is, and how callers are authenticated. */
export const gatewayConfigSchema = commonConfigSchema
  .extend({
    HISTORY_SVC_URL: serviceUrl(8081),
    PLAYLIST_SVC_URL: serviceUrl(8082),
    PREFERENCE_SVC_URL: serviceUrl(8083),
    PROFILE_SVC_URL: serviceUrl(8084),
    CATALOGUE_SVC_URL: serviceUrl(8085),
    /** HS256 secret for Bearer JWTs; unset (and no JWKS): the embedded dev secret in DATA_DIR. */
    AUTH_JWT_SECRET: z.string().min(32, 'AUTH_JWT_SECRET must be at least 32 characters').optional(),
    AUTH_JWKS_URL: z.string().url().optional(),
    AUTH_JWT_ISSUER: z.string().min(1).optional(),
    AUTH_JWT_AUDIENCE: z.string().min(1).optional(),
    /** Identity-provider userinfo address for `sessionToken` credentials; unset: session tokens are dev JWTs. */
    AUTH_USERINFO_URL: z.string().url().optional(),
    AUTH_USERINFO_ID_FIELD: z.string().min(1).default('sub'),
    UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(30_000),
  });
export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;
