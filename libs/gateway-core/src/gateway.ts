import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import { IDENTITY_HEADER, type Authenticator, type Identity, type InternalIdentity } from '@udp/auth';
import { buildAsyncApiDocument, buildOpenApiDocument, changesApi, exportApi, healthApi } from '@udp/contracts';
import {
  errorHandler,
  mountProbes,
  mountRoute,
  observeServerRequests,
  notFoundHandler,
  refuseIllFormedQuery,
  rejectUndecodablePath,
  requestContext,
  requestId,
  sendProblem,
  serviceOf,
} from '@udp/http-kit';
import { type Logger, traceRequest } from '@udp/telemetry';
import { answerPreflight, corsHeaders } from './cors';
import { docsPage } from './docs-page';
import { authenticate, authenticateIfSent, checkTokenType, methodNotAllowed, refuseClientIdentity } from './edge-checks';
import { dispatchInProcess, forward, serviceHealth, upstreamMs } from './proxy';
import { erasureLimit, perAddressLimit, perUserLimit, type RateLimits, verifyErasureFirst } from './rate-limits';

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
  // The request's trace, decided once: a SERVER span only when the head sampler records it (libs/telemetry edge.ts).
  app.use(traceRequest);
  app.use(requestId);
  // The gateway's access line also says how long the service took (`upstream_ms`), when one was called.
  app.use(
    requestContext(logger, {
      accessFields: (res) => {
        const ms = upstreamMs(res);
        return ms === undefined ? {} : { upstream_ms: ms };
      },
    }),
  );
  // Every request is counted and timed, whatever answers it (a preflight, a rate limit, a 404).
  app.use(observeServerRequests(serviceOf(logger)));
  // The gateway's own probes: it is ready when it runs; it never calls the services for them (one service down
  // must not take the whole API out of its Service; /health/ says which service is down).
  mountProbes(app);
  // CORS headers first, so that every answer a browser app gets (a 429 too) is readable by it; then the limit per
  // client address, for every request (preflights, /health/, /docs and floods without credentials included).
  if (options.corsOrigins?.length) app.use(corsHeaders(options.corsOrigins));
  const limits = options.rateLimits;
  // An erasure is never refused for other traffic (issue 27): its credentials are verified first, and a verified
  // one is counted in its own budget only.
  if (limits) app.delete(exportApi.erase.path, verifyErasureFirst(authenticator));
  if (limits?.perAddress) app.use(perAddressLimit(limits, logger));
  app.use(answerPreflight);
  app.use(rejectUndecodablePath);
  // The services check it too (and the body); the gateway's own routes read the query as well.
  app.use(refuseIllFormedQuery);
  const document = buildOpenApiDocument();
  app.use(refuseClientIdentity);
  app.use(methodNotAllowed(document));

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
  // One limiter for every authenticated route: a user's quota is one, whatever the service.
  const perUser = [
    ...(limits?.perUser ? [perUserLimit(limits, logger)] : []),
    ...(limits?.erasurePerUser ? [erasureLimit(limits, logger)] : []),
  ];
  // Live sync authenticates in its routes (a ticket stands for the header there); credentials sent meet the limit per
  // user first, as on every other authenticated route (a ticket is counted when it is issued).
  app.use(changesApi.stream.path, authenticateIfSent(authenticator), ...perUser);
  for (const router of options.routers ?? []) app.use(router);

  for (const route of routes) {
    // Signed only for a hop over HTTP; an in-process service is handed the caller itself.
    const vouch = (_req: Request, res: Response): Record<string, string> =>
      res.locals.caller ? { [IDENTITY_HEADER]: identity.sign(res.locals.caller) } : {};
    const proxy = route.handler
      ? dispatchInProcess(route.handler, (res): Identity | undefined => res.locals.caller, route.url)
      : forward({ url: route.url, timeoutMs: options.upstreamTimeoutMs ?? 30_000 }, vouch);
    for (const prefix of route.prefixes) {
      app.use(prefix, ...(route.public ? [proxy] : [checkTokenType, authenticate(authenticator), ...perUser, proxy]));
    }
  }

  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}
