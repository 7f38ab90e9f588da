import { randomUUID } from 'node:crypto';
import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { ConcurrencyConflictError, DomainError } from '@udp/eventsourcing';
import { StoreUnavailableError } from '@udp/eventstore';
import { IDENTITY_HEADER, type InternalIdentity } from '@udp/auth';
import type { Logger } from '@udp/telemetry';
import { debugSpansHandback } from './debug-handback';
import { observeServerRequests } from './request-observation';
import { HttpError, badRequest, sendProblem, unauthorized } from './problem';
import { type ServiceParts, healthRoute, serviceHealthChecks } from './health';
import { type ReadinessParts, mountProbes } from './probes';

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    log: Logger;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
/** Path parts that are capabilities (an export key downloads the export): never in a log line. */
const SECRET_PATH = /^(\/api\/data\/export\/(?:public\/)?)[^/?]+/;
export const loggablePath = (url: string) => url.split('?')[0].replace(SECRET_PATH, '$1{key}');

export interface RequestContextOptions {
  /** More fields for this hop's access line, e.g. the gateway's time spent waiting for the service. */
  accessFields?: (res: Response) => Record<string, unknown>;
}

/**
 * Requests the embedded gateway hands to a service in the same process. The gateway has already given them an
 * id, a logger and an access-log line, checked the path, and authenticated the caller (here, when the route is
 * not public): the service's edge skips that work instead of doing it twice, and takes the caller from here
 * instead of signing and verifying an identity header. Only code in this process can put a request here.
 */
const handedOver = new WeakMap<Request, { userId?: string }>();

export function handOverInProcess(req: Request, caller: { userId: string } | undefined): void {
  handedOver.set(req, { userId: caller?.userId });
}

/** Request id (taken from X-Request-Id when well-formed, else new), echoed back and on every log line. */
export function requestContext(logger: Logger, options: RequestContextOptions = {}) {
  return (req: Request, res: Response, next: NextFunction) => {
    // Handed over in process by the embedded gateway: the gateway's request id is kept, and it answers with it.
    const handed = handedOver.has(req);
    if (!handed) {
      const given = req.header('x-request-id');
      req.id = given && REQUEST_ID.test(given) ? given : randomUUID();
    }
    // Made on first use: most requests never log, and a child logger per request is measurable.
    let child: Logger | undefined;
    const log = () => (child ??= logger.child({ request_id: req.id }));
    Object.defineProperty(req, 'log', { configurable: true, get: log });
    if (!handed) res.setHeader('x-request-id', req.id);
    if (logger.isLevelEnabled('info')) {
      // One access line per hop, from this hop's own logger: in the embedded mode the gateway hands the same
      // request object to the service, whose context replaces `req.log`. The path goes without its query
      // string, which can hold personal data.
      const started = process.hrtime.bigint();
      // Prepended: an inner hop (the in-process service) logs before the outer one, as over HTTP, and its time
      // does not include the outer hop's log write.
      res.prependOnceListener('finish', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        const fields = { method: req.method, path: loggablePath(req.originalUrl), status: res.statusCode, ms: Math.round(ms * 10) / 10 };
        log().info({ ...fields, ...options.accessFields?.(res) }, 'request');
      });
    }
    next();
  };
}

/**
 * A path whose percent-escapes do not decode (`%ff`, `%E0%A4%A`, an encoded lone surrogate) names no resource:
 * 400 before any route or parameter decoding sees it, in the gateway and in every service alike.
 */
export function rejectUndecodablePath(req: Request, _res: Response, next: NextFunction): void {
  if (handedOver.has(req)) return next();
  try {
    decodeURIComponent(req.path);
  } catch {
    return next(badRequest('the path holds a malformed percent-encoding', [{ field: 'path', message: 'malformed percent-encoding' }]));
  }
  next();
}

/**
 * JSON bodies only, bounded in size. A body in another content type is 415, a larger one 413, malformed
 * JSON 400: all as problem+json from the error handler.
 */
export function jsonBodies(maxBytes: number) {
  const parse = express.json({ limit: maxBytes, type: () => true, strict: false });
  return (req: Request, res: Response, next: NextFunction) => {
    if (!hasBody(req)) return next();
    if (!req.is(['application/json', 'application/*+json'])) {
      return next(
        new HttpError(415, 'Unsupported Media Type', `expected Content-Type application/json, got ${req.header('content-type') ?? 'none'}`),
      );
    }
    return parse(req, res, next);
  };
}

function hasBody(req: Request): boolean {
  const length = req.header('content-length');
  return (length !== undefined && length !== '0') || req.header('transfer-encoding') !== undefined;
}

/** Services trust only an identity the gateway signed. The user id lands in res.locals.userId. */
export function requireIdentity(identity: InternalIdentity) {
  return (req: Request, res: Response, next: NextFunction) => {
    const inProcess = handedOver.get(req)?.userId;
    const verified = inProcess ? { userId: inProcess } : identity.verify(req.header(IDENTITY_HEADER));
    if (!verified) return next(unauthorized('no valid caller identity'));
    res.locals.userId = verified.userId;
    next();
  };
}

export function userIdOf(res: Response): string {
  const userId = res.locals.userId;
  if (typeof userId !== 'string') throw unauthorized('no caller identity');
  return userId;
}

const DOMAIN_STATUS: Record<DomainError['kind'], [number, string]> = {
  NotFound: [404, 'Not Found'],
  Invalid: [400, 'Bad Request'],
  Conflict: [409, 'Conflict'],
  LimitExceeded: [400, 'Limit Exceeded'],
  // A request that is well formed but would take the user past a quota of stored data (docs/architecture.md).
  QuotaExceeded: [422, 'Quota Exceeded'],
  Forbidden: [403, 'Forbidden'],
};

/** The one place where errors become HTTP answers. */
export function errorHandler(error: unknown, req: Request, res: Response, _next: NextFunction): void {
  if (res.headersSent) return;
  if (error instanceof HttpError) {
    for (const [k, v] of Object.entries(error.headers ?? {})) res.setHeader(k, v);
    return sendProblem(res, error.status, error.title, error.message, error.errors ? { errors: error.errors } : {});
  }
  if (error instanceof DomainError) {
    const [status, title] = DOMAIN_STATUS[error.kind];
    return sendProblem(res, status, title, error.message, {
      ...(error.field ? { errors: [{ field: error.field, message: error.message }] } : {}),
      ...error.quota,
    });
  }
  // Express could not decode a route parameter (rejectUndecodablePath normally answers first).
  if (error instanceof URIError) {
    return sendProblem(res, 400, 'Bad Request', 'the path holds a malformed percent-encoding', {
      errors: [{ field: 'path', message: 'malformed percent-encoding' }],
    });
  }
  if (error instanceof ConcurrencyConflictError) {
    res.setHeader('retry-after', '1');
    return sendProblem(res, 429, 'Too Many Requests', 'another request is updating the same data; retry shortly');
  }
  if (error instanceof StoreUnavailableError) {
    // Nothing was stored: the client may retry. The detail (paths, hosts) stays in the log.
    (req.log ?? console).warn({ err: error, part: error.part }, 'store unavailable');
    res.setHeader('retry-after', '5');
    return sendProblem(res, 503, 'Service Unavailable', `${error.part} unavailable; nothing was stored, retry later`, {
      unavailable: error.part,
    });
  }
  const bodyError = error as { type?: string; status?: number; message?: string };
  switch (bodyError.type) {
    case 'entity.too.large':
      return sendProblem(res, 413, 'Content Too Large', `request body exceeds the limit`);
    case 'entity.parse.failed':
      return sendProblem(res, 400, 'Bad Request', 'malformed JSON body', { errors: [{ field: 'body', message: 'malformed JSON' }] });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return sendProblem(res, 415, 'Unsupported Media Type', bodyError.message ?? 'unsupported encoding');
    case 'request.aborted':
      return sendProblem(res, 400, 'Bad Request', 'request aborted');
  }
  (req.log ?? console).error({ err: error }, 'unhandled error');
  sendProblem(res, 500, 'Internal Server Error', 'unexpected error; the request id identifies it in the logs', { request_id: req.id });
}

export function notFoundHandler(req: Request, res: Response): void {
  sendProblem(res, 404, 'Not Found', `no route for ${req.method} ${req.path}`);
}

export interface ServiceAppOptions {
  logger: Logger;
  maxBodyBytes: number;
  /** The app's name on its metrics (`udp.service`); default: the logger's `service`. */
  service?: string;
}

/** An Express app with the common edge: request id, JSON-only bodies, size limits. Add routes, then
 * `useNotFoundAndErrorHandlers`. */
export function createServiceApp(options: ServiceAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestContext(options.logger));
  app.use(debugSpansHandback());
  // After the handback: its writeHead wrapper runs first, so the span is named before the handback collects it.
  // Before anything that can answer: every request is counted.
  app.use(observeServerRequests(options.service ?? serviceOf(options.logger)));
  app.use(rejectUndecodablePath);
  app.use(jsonBodies(options.maxBodyBytes));
  return app;
}

/** The `service` field every line of a logger from createLogger carries. */
export function serviceOf(logger: Logger): string {
  const service = (logger.bindings() as { service?: unknown }).service;
  return typeof service === 'string' ? service : 'unknown';
}

/** Ends the app: a problem+json 404 for any path no route took, then the one error handler (after the routes). */
export function useNotFoundAndErrorHandlers(app: Express): Express {
  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}

export interface ServiceHttpAppOptions extends ServiceAppOptions {
  /** What /health/ checks; it answers without credentials. */
  health: ServiceParts;
  /** A read-model projection further behind than this fails /readyz (PROJECTION_MAX_LAG_S; default 60 s). */
  maxProjectionLagSeconds?: number;
  /** Every other route needs a request forwarded by the gateway with this identity. */
  identity: InternalIdentity;
  /** The service's own routers, in order. */
  routes: RequestHandler[];
}

/** A service's whole HTTP app: the common edge, /health/, the identity check, the service's routes, then 404 and errors. */
export function serviceHttpApp(options: ServiceHttpAppOptions): Express {
  const app = createServiceApp(options);
  app.get('/health/', healthRoute(serviceHealthChecks(options.health)));
  mountProbes(app, readinessOf(options.health, options.maxProjectionLagSeconds));
  app.use(requireIdentity(options.identity));
  for (const routes of options.routes) app.use(routes);
  return useNotFoundAndErrorHandlers(app);
}

/** /readyz's parts from /health/'s: the same stores and projectors, the bus left out. */
export function readinessOf(parts: ServiceParts, maxLagSeconds = 60): ReadinessParts {
  return { store: parts.store, readModels: parts.readModels, projectors: parts.projectors, maxLagSeconds };
}
