import { isIP } from 'node:net';
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

/** A comma-separated list; each entry checked by `item`. */
const commaList = (item: z.ZodType<string, string>) =>
  z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean),
    )
    .pipe(z.array(item));

/** An address, a CIDR range (`10.0.0.0/8`, `fd00::/8`), or one of Express's names for a range. */
const trustedProxy = z.string().refine(
  (entry) => {
    if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
    const [address, bits, ...rest] = entry.split('/');
    const family = isIP(address);
    if (family === 0 || rest.length > 0) return false;
    return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
  },
  { error: (issue) => `${String(issue.input)} is not an IP address, a CIDR range, loopback, linklocal or uniquelocal` },
);

/** `scheme://host[:port]` exactly as a browser sends it in `Origin` (no path, no trailing slash), or `*`. */
const corsOrigin = z.string().refine(
  (entry) => {
    if (entry === '*') return true;
    try {
      const url = new URL(entry);
      return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === entry;
    } catch {
      return false;
    }
  },
  { error: (issue) => `${String(issue.input)} is not an origin such as https://app.example.com (no path, no trailing slash) or *` },
);

const connections = z.coerce.number().int().min(0).max(1_000_000);
const requestsPerWindow = z.coerce.number().int().min(0).max(1_000_000_000);

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
  /** Proxies whose X-Forwarded-For the gateway believes (Express `trust proxy`); unset: none, req.ip is the peer. */
  TRUSTED_PROXIES: commaList(trustedProxy).optional(),
  /** Origins whose browser apps may call the API (CORS); `*` alone: any origin, without credentials; unset: none. */
  CORS_ORIGINS: commaList(corsOrigin)
    .refine((origins) => !origins.includes('*') || origins.length === 1, { message: '* must stand alone' })
    .optional(),
  /** Rate limits: requests per window of RATE_LIMIT_WINDOW_S seconds, per authenticated user and per client address. */
  RATE_LIMIT_WINDOW_S: z.coerce.number().int().min(1).max(3600).default(10),
  RATE_LIMIT_PER_USER: requestsPerWindow.default(1000),
  RATE_LIMIT_PER_ADDRESS: requestsPerWindow.default(10_000),
  /** Erasure requests (DELETE /api/data) per user per window, a budget of their own: no other traffic counts against it. */
  RATE_LIMIT_ERASURE_PER_USER: requestsPerWindow.default(10),
  /**
   * Open connections one client address may hold at the gateway (IPv6: per /56); more are dropped, so that one
   * address cannot take every one of HTTP_MAX_CONNECTIONS. 0: no cap but that one. Room for an office behind one NAT
   * whose users each keep live streams open (docs/architecture.md, "The public edge").
   */
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: connections.default(1000),
  /** The same for a peer in TRUSTED_PROXIES, a load balancer carrying many clients: by default as many as the server takes. */
  HTTP_MAX_CONNECTIONS_PER_PROXY: connections.default(10_000),
  /** Live sync (`GET /api/changes`, docs/live-sync.md): seconds between heartbeat comments, so proxies keep a stream open. */
  CHANGES_HEARTBEAT_S: z.coerce.number().int().min(1).max(3600).default(15),
  /** Streams one user may hold at one gateway process; a new one beyond ends the oldest (a `close` event, `replaced`). */
  CHANGES_MAX_STREAMS_PER_USER: z.coerce.number().int().min(1).max(1000).default(10),
  /** Streams one gateway process holds in all; beyond, a new one is a 503 (within HTTP_MAX_CONNECTIONS). */
  CHANGES_MAX_STREAMS: connections.default(10_000),
  /** Unread bytes a stream may hold; a reader that falls further behind is closed (`close`, `slow-reader`) and resumes. */
  CHANGES_MAX_BUFFER_BYTES: z.coerce
    .number()
    .int()
    .min(4096)
    .max(64 * 1024 * 1024)
    .default(256 * 1024),
  /** Tickets redeemed in the last 30 s that one gateway process remembers (single use; without MONGO_URL); beyond, a 503. */
  CHANGES_MAX_TICKETS: z.coerce.number().int().min(100).max(10_000_000).default(100_000),
  /**
   * Changes a resume (a stream opened with a cursor) may send before `ready`; a device further behind gets `close`,
   * `resync`, and reads the API afresh (docs/live-sync.md, "Cursors and resuming").
   */
  CHANGES_MAX_CATCHUP: z.coerce.number().int().min(100).max(1_000_000).default(1000),
  /**
   * Seconds an erasure request heard holds its user's requests when neither its completion nor its re-publication
   * (every 30 s while pending) is heard (docs/erasure.md, "The erasure boundary").
   */
  ERASURE_HOLD_S: z.coerce.number().int().min(10).max(86_400).default(120),
});
export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;
