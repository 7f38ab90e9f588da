import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { IDENTITY_HEADER, type Authenticator, type Identity, type InternalIdentity } from '@udp/auth';
import { buildAsyncApiDocument, buildOpenApiDocument, changesApi, exportApi, healthApi } from '@udp/contracts';
import {
  type Mount,
  byPrefix,
  errorHandler,
  inOneLayer,
  mountProbes,
  mountRoute,
  observeServerRequests,
  notFoundHandler,
  refuseIllFormedQuery,
  rejectUndecodablePath,
  requestContext,
  requestId,
  runChain,
  sendProblem,
  serviceOf,
} from '@udp/http-kit';
import { type Logger, traceRequest } from '@udp/telemetry';
import { answerPreflight, corsHeaders } from './cors';
import { docsPage } from './docs-page';
import { authenticate, authenticateIfSent, checkTokenType, methodNotAllowed, refuseClientIdentity } from './edge-checks';
import { dispatchInProcess, forward, serviceHealth, upstreamMs } from './proxy';
import type { ErasureHolds } from './erasure-holds';
import { type PerUserLimit, erasureLimit, perAddressLimit, perUserLimit, type RateLimits, verifyErasureFirst } from './rate-limits';

export interface ServiceRoute {
  /** The service's name in /health/ (default: its first prefix). */
  name?: string;
  /** Path prefixes this service owns, e.g. ['/api/history']. */
  prefixes: string[];
  url: string;
  /** Public routes (the QC catalogue) need no credentials. */
  public?: boolean;
  /** The service's handler when it runs in this process (embedded mode): requests skip the HTTP hop. */
  handler?: RequestHandler;
}

export interface GatewayOptions {
  routes: ServiceRoute[];
  authenticator: Authenticator;
  identity: InternalIdentity;
  logger: Logger;
  upstreamTimeoutMs?: number;
  /** Routes the gateway serves itself (e.g. `/api/v1/{codops}/{endpoint}`), before the services' prefixes. */
  routers?: RequestHandler[];
  /**
   * The proxies in front of the gateway (TRUSTED_PROXIES: addresses, CIDR ranges, `loopback`...), Express's
   * `trust proxy`: only a peer listed here may say who the client is (X-Forwarded-For). Absent: none.
   */
  trustedProxies?: string[];
  /** Origins whose browser apps may call (CORS_ORIGINS); `['*']`: any, without credentials. Absent or empty: none. */
  corsOrigins?: string[];
  /** Absent: no rate limits (tests of other things); the app always passes its configuration. */
  rateLimits?: RateLimits;
  /** Routes whose answer stays open (live sync's `GET /api/changes`), served beside the router (`serveBeside`). */
  streams?: StreamRoute[];
  /** The limit per user, when its count is shared with other work (live sync's resumes); else made from `rateLimits`. */
  userLimit?: PerUserLimit;
  /** The users whose erasure is pending: their requests but the erasure's own are refused (erasure-holds.ts). */
  erasureHolds?: ErasureHolds;
}

/** A route whose answer stays open: its method, its exact path, and its handler (errors go to `next`). */
export interface StreamRoute {
  method: string;
  path: string;
  handler: RequestHandler;
}

/**
 * Streams beside the router. A stream's request and response live as long as it does, and with them whatever the
 * Express router left on them (its dispatch state; the request object turned into a dictionary by the properties the
 * router adds and restores): 1.5 KB of heap a stream, 15 MiB for 10,000 (docs/live-sync.md). A stream's request goes
 * through the gateway's edge, the same middleware in the same order as every request (trace, request id, access line,
 * observation, CORS, the limit per address, the checks), then straight to its handler; an error anywhere is the usual
 * problem+json of the error handler, before the stream starts. The access line and the metrics come when it ends.
 */
function serveBeside(streams: StreamRoute[]) {
  const edge: RequestHandler[] = [];
  const byPath = new Map<string, Map<string, RequestHandler>>();
  for (const s of streams) byPath.set(s.path, (byPath.get(s.path) ?? new Map()).set(s.method, s.handler));
  const route = (req: Request, res: Response, next: NextFunction) => {
    const handler = byPath.size === 0 ? undefined : byPath.get(req.path)?.get(req.method);
    if (!handler) return next();
    // Express's dispatch stops here: the rest of this request's handling keeps no state of the router.
    req.next = undefined as unknown as NextFunction;
    // An error is answered by the one error handler; a handler that passed the request on, by the router's 404.
    const fail = (error: unknown) => errorHandler(error, req, res, () => undefined);
    runChain([...edge, handler], req, res, (error) => (error === undefined ? notFoundHandler(req, res) : fail(error)));
  };
  return { edge, route };
}

/**
 * The public HTTP surface: authenticates the caller, vouches for it to the services with a signed identity
 * header, forwards `/api/...` by prefix, and serves `/health/`, `/openapi.json` and `/docs`.
 */
export function createGateway(options: GatewayOptions): Express {
  const { routes, authenticator, identity, logger } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // req.ip is the client only when the peer is a trusted proxy; an untrusted peer's X-Forwarded-For is ignored.
  app.set('trust proxy', options.trustedProxies?.length ? options.trustedProxies : false);
  // Requests that stay open (live sync's streams) pass the same edge, beside the router (`serveBeside`): `edge` adds a
  // middleware to both, so the two lists cannot drift apart. Probes and the erasure's own check take no stream's path.
  const beside = serveBeside(options.streams ?? []);
  app.use(beside.route);
  const edge = (...middleware: RequestHandler[]) => {
    if (middleware.length) app.use(inOneLayer(middleware));
    beside.edge.push(...middleware);
  };
  // The request's trace, decided once: a SERVER span only when the head sampler records it (libs/telemetry edge.ts).
  // The gateway's access line also says how long the service took (`upstream_ms`), when one was called. Every
  // request is counted and timed, whatever answers it (a preflight, a rate limit, a 404).
  const context = requestContext(logger, {
    accessFields: (res) => {
      const ms = upstreamMs(res);
      return ms === undefined ? {} : { upstream_ms: ms };
    },
  });
  edge(traceRequest, requestId, context, observeServerRequests(serviceOf(logger)));
  // The gateway's own probes: it is ready when it runs; it never calls the services for them (one service down
  // must not take the whole API out of its Service; /health/ says which service is down).
  mountProbes(app);
  // CORS headers first, so that every answer a browser app gets (a 429 too) is readable by it; then the limit per
  // client address, for every request (preflights, /health/, /docs and floods without credentials included).
  edge(...(options.corsOrigins?.length ? [corsHeaders(options.corsOrigins)] : []));
  const limits = options.rateLimits;
  // An erasure is never refused for other traffic (issue 27): its credentials are verified first, and a verified
  // one is counted in its own budget only.
  if (limits) app.delete(exportApi.erase.path, verifyErasureFirst(authenticator));
  edge(...(limits?.perAddress ? [perAddressLimit(limits)] : []), answerPreflight, rejectUndecodablePath);
  // The services check it too (and the body); the gateway's own routes read the query as well.
  const document = buildOpenApiDocument();
  edge(refuseIllFormedQuery, refuseClientIdentity, methodNotAllowed(document));

  // One limiter for every authenticated route: a user's quota is one, whatever the service.
  // Then a user whose erasure is pending meets the erasure boundary: refused, but for the erasure's own requests.
  const perUser = [
    ...(options.userLimit ? [options.userLimit] : limits?.perUser ? [perUserLimit(limits)] : []),
    ...(limits?.erasurePerUser ? [erasureLimit(limits)] : []),
    ...(options.erasureHolds ? [options.erasureHolds.check] : []),
  ];

  // Every service's prefixes as one layer (`byPrefix`), in this order: a request meets the chain of its service only.
  // Right after the edge: no route of the gateway's own below takes a path under a service's prefix, and Express pays
  // for every layer a request passes, matching or not (the API's requests passed nine more).
  const mounts: Mount[] = [];
  for (const route of routes) {
    // Signed only for a hop over HTTP; an in-process service is handed the caller itself.
    const vouch = (_req: Request, res: Response): Record<string, string> =>
      res.locals.caller ? { [IDENTITY_HEADER]: identity.sign(res.locals.caller) } : {};
    const proxy = route.handler
      ? dispatchInProcess(
          route.handler,
          (res): Identity | undefined => res.locals.caller,
          route.url,
          Boolean(options.trustedProxies?.length),
        )
      : forward(
          { url: route.url, timeoutMs: options.upstreamTimeoutMs ?? 30_000, trustsProxies: Boolean(options.trustedProxies?.length) },
          vouch,
        );
    const chain = route.public ? [proxy] : [checkTokenType, authenticate(authenticator), ...perUser, proxy];
    for (const prefix of route.prefixes) mounts.push({ prefix, chain });
  }
  app.use(byPrefix(mounts));

  // 200 `UP` when every service is up; else 503 problem+json naming each service and the parts it reported.
  mountRoute(app, healthApi.health, async (_input, _req, res) => {
    const answers = await Promise.all(routes.map(async (r) => [r.name ?? r.prefixes[0], await serviceHealth(r.url)] as const));
    const down = answers.filter(([, health]) => health.status === 'DOWN');
    if (down.length === 0) return void res.status(200).type('text/plain').send('UP');
    const detail = down.map(([name, health]) => {
      const parts = Object.entries(health.checks ?? {})
        .filter(([, status]) => status === 'DOWN')
        .map(([part]) => part);
      return parts.length ? `${name} (${parts.join(', ')})` : name;
    });
    res.setHeader('retry-after', '5');
    sendProblem(res, 503, 'Service Unavailable', `DOWN: ${detail.join('; ')}`, { services: Object.fromEntries(answers) });
  });
  const openapi = JSON.stringify(document);
  app.get('/openapi.json', (_req, res) => res.type('application/json').send(openapi));
  // The topics on the bus (for the data-management team), beside the HTTP API's document.
  const asyncapi = JSON.stringify(buildAsyncApiDocument());
  app.get('/asyncapi.json', (_req, res) => res.type('application/json').send(asyncapi));
  app.use(docsPage());
  // Live sync authenticates in its routes (a ticket stands for the header there); credentials sent meet the limit per
  // user first, as on every other authenticated route (a ticket is counted when it is issued). The same for a stream
  // served beside the router.
  const changesCaller = [checkTokenType, authenticateIfSent(authenticator), ...perUser];
  app.use(changesApi.stream.path, ...changesCaller);
  beside.edge.push(...changesCaller);
  for (const router of options.routers ?? []) app.use(router);

  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}
