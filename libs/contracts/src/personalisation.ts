import { z } from './zod';
import { defineRoute } from './routes/define-route';
import { json, problem } from './routes/helpers';

/**
 * `GET /api/v1/{codops}/{endpoint}`: personalisation endpoints configured per codops (a broadcaster unit),
 * each served by one of several components. See docs/personalisation.md.
 */
export const PERSONALISATION_LIMITS = { minSize: 1, maxSize: 100, defaultSize: 20 } as const;

export const CodopsParam = z.object({
  codops: z.string().regex(/^[a-z0-9_-]{1,32}$/, 'codops is 1-32 lower-case letters, digits, - or _'),
  endpoint: z.string().regex(/^[a-z0-9_-]{1,64}$/, 'endpoint is 1-64 lower-case letters, digits, - or _'),
});

export const EndpointQuery = z
  .object({
    u: z
      .uuid({ message: 'u must be a UUID' })
      .openapi({ description: 'a stable client id (UUID); drives only the A/B split, never whose data is read' }),
    size: z
      .string()
      .regex(/^\d{1,3}$/, `size must be an integer from ${PERSONALISATION_LIMITS.minSize} to ${PERSONALISATION_LIMITS.maxSize}`)
      .transform(Number)
      .refine(
        (n) => n >= PERSONALISATION_LIMITS.minSize && n <= PERSONALISATION_LIMITS.maxSize,
        `size must be an integer from ${PERSONALISATION_LIMITS.minSize} to ${PERSONALISATION_LIMITS.maxSize}`,
      )
      // Documented as the integer range it accepts (the pattern alone would let `0` pass as valid).
      .openapi({ type: 'integer', minimum: PERSONALISATION_LIMITS.minSize, maximum: PERSONALISATION_LIMITS.maxSize })
      .optional(),
    component: z
      .string()
      .regex(/^[a-z0-9-]{1,64}$/, 'component names a component')
      .optional()
      .openapi({ description: 'override: run this component of the endpoint instead of the A/B choice' }),
    stream: z
      .enum(['true', 'false'], { message: 'stream must be true or false' })
      .transform((v) => v === 'true')
      .optional()
      .openapi({ description: 'answer as NDJSON (one line per item, a header line first); no debug block' }),
  })
  .openapi('EndpointQuery');
export type EndpointQuery = z.infer<typeof EndpointQuery>;

export const EndpointItem = z
  .object({
    item_id: z.string(),
    date: z.number().int().optional().openapi({ description: 'ms; when the user last watched or saved it' }),
    last_playback_position: z.number().optional().openapi({ description: 'seconds' }),
    users: z.number().int().optional().openapi({ description: 'trending: distinct users who watched it in the window' }),
  })
  .openapi('EndpointItem');
export type EndpointItem = z.infer<typeof EndpointItem>;

export const DebugSpan = z
  .object({
    name: z.string(),
    trace_id: z.string().regex(/^[0-9a-f]{32}$/),
    span_id: z.string().regex(/^[0-9a-f]{16}$/),
    parent_id: z.string().nullable(),
    kind: z.string().openapi({ example: 'SpanKind.SERVER' }),
    start_ms: z.number(),
    duration_ms: z.number(),
    attributes: z.record(z.string(), z.unknown()),
  })
  .openapi('DebugSpan');
export type DebugSpan = z.infer<typeof DebugSpan>;

export const DebugSpans = z
  .object({
    trace_id: z.string(),
    spans: z
      .array(DebugSpan)
      .openapi({ description: 'ordered by end time; the gateway span last; empty when tracing is off for the codops' }),
  })
  .openapi('DebugSpans');
export type DebugSpans = z.infer<typeof DebugSpans>;

export const EndpointDebug = z
  .object({
    request_id: z.string(),
    component: z.string(),
    chosen: z.string(),
    selection: z.enum(['ab', 'override']),
    fallback: z.object({ used: z.boolean(), reason: z.string().optional(), component: z.string().optional() }),
    timings_ms: z.record(z.string(), z.number()),
  })
  .openapi('EndpointDebug');
export type EndpointDebug = z.infer<typeof EndpointDebug>;

export const EndpointAnswer = z
  .object({
    status: z.literal('ok'),
    codops: z.string(),
    endpoint: z.string(),
    result: z.object({ component: z.string(), fallback_used: z.boolean(), items: z.array(EndpointItem) }),
    debug: EndpointDebug.optional().openapi({ description: 'only with a valid X-Service-Debug-Secret' }),
    debug_spans: DebugSpans.optional().openapi({ description: 'only with a valid X-Service-Debug-Secret' }),
  })
  .openapi('EndpointAnswer');
export type EndpointAnswer = z.infer<typeof EndpointAnswer>;

/** The per-codops endpoint configuration (a JSON file, overridable by environment). */
export const EndpointConfig = z.object({
  /** component name -> share of the A/B split (any positive numbers; normalised). */
  components: z
    .record(z.string().regex(/^[a-z0-9-]{1,64}$/), z.number().positive())
    .refine((c) => Object.keys(c).length > 0, 'at least one component'),
  /** Answers when the chosen component fails or runs out of time; none: such a call answers 503. */
  fallback: z
    .string()
    .regex(/^[a-z0-9-]{1,64}$/)
    .optional(),
  /** Time budget of the chosen component; past it the fallback answers. */
  budget_ms: z.number().int().min(1).max(30_000).default(800),
  default_size: z.number().int().min(1).max(100).default(PERSONALISATION_LIMITS.defaultSize),
});
export const CodopsConfig = z.object({
  /** false: no span of this codops' calls is captured for the debug block (`spans: []`). */
  tracing: z.boolean().default(true),
  endpoints: z.record(z.string().regex(/^[a-z0-9_-]{1,64}$/), EndpointConfig),
});
export const PersonalisationConfig = z.object({ codops: z.record(z.string().regex(/^[a-z0-9_-]{1,32}$/), CodopsConfig) });
export type PersonalisationConfig = z.infer<typeof PersonalisationConfig>;
export type CodopsConfig = z.infer<typeof CodopsConfig>;
export type EndpointConfig = z.infer<typeof EndpointConfig>;

// ---- routes --------------------------------------------------------------------------------------------------

/** The gateway's personalisation endpoints (libs/personalisation). A malformed codops or endpoint is unknown: 404. */
export const personalisationApi = {
  endpoint: defineRoute({
    operationId: 'getPersonalisationEndpoint',
    method: 'get',
    path: '/api/v1/{codops}/{endpoint}',
    malformedPathIsNotFound: true,
    tags: ['personalisation'],
    summary: 'A personalisation endpoint of a codops, served by one of its components (A/B split on u, or override)',
    description: 'Personal components read the data of the caller named by the token only; without a token they fall back to `trending`.',
    security: [{}, { bearer: [] }, { sessionToken: [] }],
    request: {
      params: CodopsParam,
      query: EndpointQuery,
      headers: z.object({
        'x-service-debug-secret': z
          .string()
          .optional()
          .openapi({ description: 'the codops secret: adds `debug` and `debug_spans`; never from a browser or app' }),
      }),
    },
    responses: {
      200: {
        ...json(EndpointAnswer, 'the items'),
        content: { ...json(EndpointAnswer, '').content, 'application/x-ndjson': { schema: z.string() } },
      },
      400: problem('invalid u, size or component; `errors` names the field'),
      401: problem('a token was sent and is invalid'),
      404: problem('unknown codops or endpoint'),
      429: problem('too many wrong debug secrets'),
    },
  }),
};
