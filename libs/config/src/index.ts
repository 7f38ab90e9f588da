import { z } from 'zod';

/** A setting that is wrong or missing: start-up stops with this message. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const port = z.coerce.number().int().min(0).max(65535);
const optionalUrl = z.string().trim().min(1).optional();

/** Settings every app shares. Adapters are chosen by which of these are set (docs/architecture.md, "Two run modes"). */
export const commonConfigSchema = z.object({
  PORT: port.optional(),
  HOST: z.string().default('0.0.0.0'),
  DATA_DIR: z.string().min(1).default('./data'),
  EVENTSTORE_URL: optionalUrl,
  MONGO_URL: optionalUrl,
  /**
   * Read models of the services: `postgres://` (or `postgresql://`) for PostgreSQL, a MongoDB URL as MONGO_URL; unset:
   * MONGO_URL's, else embedded. Wins over MONGO_URL for the services' read models.
   */
  READMODEL_URL: z
    .string()
    .trim()
    .min(1)
    .regex(/^(postgres(ql)?|mongodb(\+srv)?):\/\//i, 'READMODEL_URL must be a postgres:// (postgresql://) or mongodb:// URL')
    .optional(),
  MONGO_DB_PREFIX: z
    .string()
    .regex(/^[a-zA-Z0-9_]+$/)
    .default('udp'),
  KAFKA_BROKERS: z
    .string()
    .trim()
    .min(1)
    .transform((s) =>
      s
        .split(',')
        .map((b) => b.trim())
        .filter(Boolean),
    )
    .optional(),
  /** How soon Kafka hands a dead consumer's partitions to the rest of its group (broker allows 6000..1800000). */
  KAFKA_SESSION_TIMEOUT_MS: z.coerce.number().int().min(6000).max(1_800_000).optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Secret shared by the gateway and the services to sign the caller's identity; embedded: a file in DATA_DIR. */
  INTERNAL_AUTH_SECRET: z.string().min(32, 'INTERNAL_AUTH_SECRET must be at least 32 characters').optional(),
  /** Longest wait for the read model to show an acknowledged write. */
  READ_YOUR_WRITES_TIMEOUT_MS: z.coerce.number().int().min(0).max(60000).default(5000),
  /** Largest accepted JSON body, in bytes. */
  MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(4 * 1024 * 1024),
  /** The request line and headers must arrive within this many ms (Node's default: 60 s). */
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(15_000),
  /** The whole request, body included, within this many ms (Node's default: 300 s): a slow body is cut off. */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000),
  /** An idle keep-alive connection is closed after this many ms: above the 60 s idle timeout of common load balancers. */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(65_000),
  /** Open connections per server beyond this are dropped; 0: no cap. */
  HTTP_MAX_CONNECTIONS: z.coerce.number().int().min(0).max(1_000_000).default(10_000),
  /**
   * Distributed mode: how many segments the replicas of a service divide its projections and publishers into
   * (docs/deployment.md, "Scaling out"). Fixed for a deployment; at least the largest number of replicas.
   */
  PROJECTION_SEGMENTS: z.coerce.number().int().min(1).max(1024).default(16),
  /** How long a replica's claim on a segment holds without renewal: a replica that dies is taken over after it. */
  PROJECTION_LEASE_MS: z.coerce.number().int().min(1000).max(600_000).default(10_000),
  /** /readyz fails while a projection is further behind the store than this many seconds. */
  PROJECTION_MAX_LAG_S: z.coerce.number().min(1).max(86_400).default(60),
  /** A stopping process finishes its requests, gives back its segments and sends its spans within this; then it exits. */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(20_000),
});
export type CommonConfig = z.infer<typeof commonConfigSchema>;

/** Parses the environment with a zod schema; every problem is named with its variable. */
export function loadConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const cleaned: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v !== '') cleaned[k] = v;
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}

export { z };
