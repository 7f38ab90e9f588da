import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { type Attributes, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import { IDENTITY_HEADER, type InternalIdentity } from '@udp/auth';
import {
  DEBUG_SPANS_HEADER,
  METRICS,
  type Logger,
  debugSpanCapture,
  encodeDebugSpans,
  metricsOn,
  recordHistogram,
  requestLogger,
  requestMetricAttributes,
  requestTraceOf,
  traceRequest,
} from '@udp/telemetry';
import { illFormedJsonBody, refuseIllFormedQuery, refuseNonUtf8Body } from './input-text';
import { HttpError, badRequest, erasurePending, unauthorized } from './problem';

/*
 * The edge of every hop: what every request passes, in this order, before the routes see it. The gateway's edge is
 * the request's one context (id, caller, logger and access line, observation, path check); a service's edge either
 * takes a request the embedded gateway handed over in process as it is (that context already made), or, over HTTP,
 * makes its own from what the gateway sent.
 */

/**
 * A request the embedded gateway hands to a service in the same process: the gateway has already given it an id, a
 * logger, an access line and its observation, checked the path, and authenticated the caller (here, when the route
 * is not public). The service's edge writes its name here; the gateway's observation then records the service's hop
 * too (`http.server.request.duration`, `udp.service` the service) and names the hop's span when the trace is recorded.
 * Only code in this process can put a request here.
 */
interface HandOver {
  userId?: string;
  /** performance.now() when the gateway handed it over: the service hop's duration starts here. */
  started: number;
  /** The service that took it (set by its edge). */
  service?: string;
  /** The service hop's SERVER span, only in a recorded trace. */
  span?: Span;
}
const handedOver = new WeakMap<Request, HandOver>();

export function handOverInProcess(req: Request, caller: { userId: string } | undefined, span?: Span): void {
  handedOver.set(req, { userId: caller?.userId, started: performance.now(), span });
}

/**
 * A service's first middleware, and the one place that asks how the request came from the gateway. Over HTTP:
 * the request id the gateway sent (echoed back) and the caller of the identity header it signed. Handed over in
 * process: the gateway's request id is kept (the gateway answers with it) and its caller is taken as it is,
 * neither signed nor verified. The caller lands in `res.locals.userId`, where `requireCaller` looks for it.
 * `identity` is absent in a service that has public routes only.
 */
export function acceptFromGateway(identity: InternalIdentity | undefined, service?: string) {
  return (req: Request, res: Response, next: NextFunction) => {
    acceptRequest(identity, service, req, res);
    next();
  };
}

/** What `acceptFromGateway` does; true when the request was handed over in process. */
function acceptRequest(identity: InternalIdentity | undefined, service: string | undefined, req: Request, res: Response): boolean {
  const handed = handedOver.get(req);
  if (handed) {
    if (handed.userId) res.locals.userId = handed.userId;
    handed.service = service;
    return true;
  }
  takeRequestId(req, res);
  const verified = identity?.verify(req.header(IDENTITY_HEADER));
  if (verified) res.locals.userId = verified.userId;
  return false;
}

export interface ServiceEdgeOptions {
  identity?: InternalIdentity;
  logger: Logger;
  /** The app's name on its metrics (`udp.service`). */
  service: string;
}

/**
 * A service's whole edge in one middleware. Handed over in process: the caller taken, the service named for the
 * gateway's observation, nothing else (one context, one access line, one path check per request). Over HTTP: the
 * request id and caller from the gateway, the access line, the observation (metrics, span name, debug spans handed
 * back), the path and query checks.
 */
export function serviceEdge(options: ServiceEdgeOptions) {
  const context = requestContext(options.logger);
  const observe = observeServerRequests(options.service, { handBackDebugSpans: true });
  return (req: Request, res: Response, next: NextFunction) => {
    if (acceptRequest(options.identity, options.service, req, res)) {
      // The service's own lines say so (`service`), under the gateway's request id.
      defineLog(req, options.logger);
      return next();
    }
    const checks = () => rejectUndecodablePath(req, res, (error?: unknown) => (error ? next(error) : refuseIllFormedQuery(req, res, next)));
    // The trace first: the gateway's, continued from its traceparent (a span only when the gateway records it).
    traceRequest(req, res, () => context(req, res, () => observe(req, res, checks)));
  };
}

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

/** The request id: taken from X-Request-Id when well-formed, else new; echoed back in the answer. */
export function takeRequestId(req: Request, res: Response): void {
  const given = req.header('x-request-id');
  req.id = given && REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader('x-request-id', req.id);
}

/** The first hop's request id (the gateway's); a service takes it in `acceptFromGateway`. */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  takeRequestId(req, res);
  next();
}

export interface RequestContextOptions {
  /** More fields for this hop's access line, e.g. the gateway's time spent waiting for the service. */
  accessFields?: (res: Response) => Record<string, unknown>;
}

/** `req.log`, a logger whose every line carries the request id (set before this), and one access line per hop. */
export function requestContext(logger: Logger, options: RequestContextOptions = {}) {
  return (req: Request, res: Response, next: NextFunction) => {
    const log = defineLog(req, logger);
    if (logger.isLevelEnabled('info')) {
      // One access line per hop that has its own edge: a service reached in process writes none (the gateway's line
      // names it, `upstream`). The path goes without its query string, which can hold personal data.
      // On 'close', which comes after 'finish', and alone when the client went away first (`aborted`): a live-sync
      // stream ends so when its device leaves, and had no line at all on 'finish'.
      const started = process.hrtime.bigint();
      res.once('close', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        const fields = {
          method: req.method,
          path: loggablePath(req.originalUrl),
          status: res.statusCode,
          ms: Math.round(ms * 10) / 10,
          ...(!res.writableFinished && { aborted: true }),
        };
        const service = handedOver.get(req)?.service;
        log().info({ ...fields, ...(service && { upstream: service }), ...options.accessFields?.(res) }, 'request');
      });
    }
    next();
  };
}

/** Where a request's `req.log` comes from: the hop's logger, and the child made from it on first use. */
const LOG = Symbol('udp.request-log');
interface LogSource {
  logger: Logger;
  child?: Logger;
}

/**
 * `req.log`, made on first use: most requests never log, and a child logger per request is measurable. Its lines
 * carry the request id and the request's trace (set by the edge's `traceRequest`). One getter on Express's request
 * prototype, shared by every request of every app: a getter defined on each request (a closure of its own) gave
 * every request object a shape of its own, a slow dictionary of 1.6 KB that an open live-sync stream kept.
 */
Object.defineProperty(express.request, 'log', {
  configurable: true,
  get(this: Request & { [LOG]?: LogSource }): Logger | undefined {
    const source = this[LOG];
    return source && (source.child ??= requestLogger(source.logger, this.id, requestTraceOf(this)));
  },
});

/** Gives `req.log` this hop's logger (a service reached in process takes over the gateway's request); answers its getter. */
function defineLog(req: Request, logger: Logger): () => Logger {
  const source: LogSource = { logger };
  (req as Request & { [LOG]?: LogSource })[LOG] = source;
  return () => (source.child ??= requestLogger(logger, req.id, requestTraceOf(req)));
}

/**
 * A path whose percent-escapes do not decode (`%ff`, `%E0%A4%A`, an encoded lone surrogate) names no resource:
 * 400 before any route or parameter decoding sees it, in the gateway and in every service reached over HTTP (a
 * request handed over in process passed the gateway's).
 */
export function rejectUndecodablePath(req: Request, _res: Response, next: NextFunction): void {
  try {
    decodeURIComponent(req.path);
  } catch {
    return next(badRequest('the path holds a malformed percent-encoding', [{ field: 'path', message: 'malformed percent-encoding' }]));
  }
  next();
}

/**
 * JSON bodies only, bounded in size. A body in another content type is 415, a larger one 413, malformed
 * JSON 400, and so is one that is not UTF-8 or holds what cannot be kept as sent (a lone surrogate, a number
 * past the doubles: input-text.ts): all as problem+json from the error handler.
 */
export function jsonBodies(maxBytes: number) {
  const json = express.json({ limit: maxBytes, type: () => true, strict: false, verify: refuseNonUtf8Body });
  const parse = (req: Request, res: Response, next: NextFunction) =>
    json(req, res, (error?: unknown) => next(error ?? illFormedJsonBody(req.body)));
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

/** Routes after this need a caller the gateway vouched for (`acceptFromGateway` put it in res.locals.userId). */
export function requireCaller(_req: Request, res: Response, next: NextFunction): void {
  if (typeof res.locals.userId !== 'string') return next(unauthorized('no valid caller identity'));
  next();
}

export function userIdOf(res: Response): string {
  const userId = res.locals.userId;
  if (typeof userId !== 'string') throw unauthorized('no caller identity');
  return userId;
}

/** Methods the HTTP conventions name; any other is recorded as `_OTHER` (a client cannot grow the label set). */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

/** Routes named by a middleware that knows them better than Express does (the gateway's documented paths). */
const namedRoutes = new WeakMap<Response, string>();

/** Names the route of a request that a router mounted by prefix will answer (used when no route of this app matched). */
export function nameRoute(res: Response, route: string): void {
  namedRoutes.set(res, route);
}

/** Span names a handler chose over the route (a personalisation endpoint's name). */
const spanNames = new WeakMap<Response, string>();

/** Names the server span now and keeps that name when the answer is written (instead of naming it after the route). */
export function nameServerSpan(res: Response, span: Span, name: string): void {
  span.updateName(name);
  spanNames.set(res, name);
}

export interface ObserveOptions {
  /** A service hands the spans of a call back to the gateway that asks (`handBackDebugSpans`); the gateway never. */
  handBackDebugSpans?: boolean;
}

/**
 * What every hop records of every request, whatever the trace sampler decides: `http.server.request.duration`
 * (method, route, status, the answering app as `udp.service`, plus what a handler added with
 * `addRequestMetricAttributes`; for a request the gateway handed over in process, a second data point for the
 * service's hop, timed from the hand-over), and the name of a recorded server span after the route that answered
 * (`GET /api/history/v2`, `http.route`), as the Express instrumentation would, for a fraction of its cost: that
 * instrumentation wraps every layer of every request (docs/performance.md, "Tracing"), while this looks once, when the
 * answer's headers are written. A request answered by a router mounted by prefix (the gateway's proxies) has the route
 * named by `nameRoute` (the gateway's documented paths), else the prefix. In a service, the spans of the call are then
 * handed back when the gateway asks: in the same wrapper, so the server span has its name when they are collected.
 */
export function observeServerRequests(service: string, options: ObserveOptions = {}) {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = performance.now();
    const server = trace.getActiveSpan();
    const recording = server?.isRecording() === true;
    let route: string | undefined;
    const writeHead = res.writeHead;
    res.writeHead = function (this: Response, ...args: unknown[]) {
      const routePath = (req.route as { path?: unknown } | undefined)?.path;
      route = (typeof routePath === 'string' ? `${req.baseUrl}${routePath}` : (namedRoutes.get(res) ?? req.baseUrl)) || undefined;
      if (recording && route) {
        const name = spanNames.get(res) ?? `${req.method} ${route}`;
        server!.updateName(name).setAttribute('http.route', route);
        handedOver.get(req)?.span?.updateName(name).setAttribute('http.route', route);
      }
      if (options.handBackDebugSpans && server) handBackDebugSpans(req, this, server);
      return (writeHead as (...a: unknown[]) => Response).apply(this, args);
    } as Response['writeHead'];
    // 'close' comes after 'finish', and alone when the client went away before the answer was complete.
    res.once('close', () => {
      const ended = performance.now();
      const handed = handedOver.get(req);
      if (handed?.span) {
        handed.span.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) handed.span.setStatus({ code: SpanStatusCode.ERROR });
        handed.span.end();
      }
      // No attribute objects while no meter reads them (the embedded default).
      if (!metricsOn()) return;
      recordHistogram(METRICS.httpServerRequestDuration, (ended - started) / 1000, dataPoint(req, res, route, service));
      if (handed?.service) {
        recordHistogram(METRICS.httpServerRequestDuration, (ended - handed.started) / 1000, dataPoint(req, res, route, handed.service));
      }
    });
    next();
  };
}

/** Data points' attributes by method, route, status and app: made once, then shared by every request alike. */
const dataPoints = new Map<string, Attributes>();

/** A request's data point attributes for one hop (`service`); those a handler added make a new object. */
function dataPoint(req: Request, res: Response, route: string | undefined, service: string): Attributes {
  const method = KNOWN_METHODS.has(req.method) ? req.method : '_OTHER';
  const status = res.headersSent ? res.statusCode : 0;
  const added = requestMetricAttributes(res);
  const key = `${method} ${route ?? ''} ${status} ${service}`;
  let attributes = added ? undefined : dataPoints.get(key);
  if (attributes) return attributes;
  attributes = {
    'http.request.method': method,
    ...(route && { 'http.route': route }),
    ...(status ? { 'http.response.status_code': status } : { 'error.type': 'aborted' }),
    ...(status >= 500 && { 'error.type': String(status) }),
    'udp.service': service,
    ...added,
  };
  // Bounded: routes are patterns and statuses few, but a path no route took is named by its prefix.
  if (!added && dataPoints.size < 10_000) dataPoints.set(key, attributes);
  return attributes;
}

/**
 * A service hands the spans of a call back to the gateway that asked (request header `x-udp-debug-spans: 1`):
 * when the answer's headers are written, the spans of this call seen in this process (those under its server span,
 * collected by that span's id, not by the trace id a caller could share with other calls) go into the response
 * header of the same name (gzip + base64). The gateway drops that request header from clients and removes the
 * response header before answering, so neither crosses the public edge. Called by `observeServerRequests` just
 * before the headers go, once the server span has its name.
 */
export function handBackDebugSpans(req: Request, res: Response, server: Span): void {
  if (req.header(DEBUG_SPANS_HEADER) !== '1') return;
  server.setAttribute('http.response.status_code', res.statusCode);
  if (!res.headersSent) res.setHeader(DEBUG_SPANS_HEADER, encodeDebugSpans(debugSpanCapture.collect(server.spanContext().spanId)));
}

/**
 * A service's side of the erasure boundary (docs/erasure.md): while the service erases a user, that user's requests are
 * refused (409 `erasure-pending`), and the erasure starts only once the writes already under way have ended. So no
 * write lands between the deletion of the user's streams and that of their documents (where a new stream's first
 * revisions would be refused by the old documents, and then deleted with them), and no read sees a half-erased user.
 * The gateway holds the user's requests for the whole erasure; this covers what it cannot see (requests already
 * forwarded, and replicas that hear of the erasure later).
 */
export class UserGate {
  /** Requests under way per user. */
  private readonly inFlight = new Map<string, number>();
  /** Users being erased here, and who waits for their writes under way to end. */
  private readonly closed = new Map<string, { drained: Promise<void>; resolve: () => void }>();

  /** Middleware after the caller is known: a closed user's request is refused; any other is counted until it ends. */
  readonly check = (req: Request, res: Response, next: NextFunction): void => {
    const userId = res.locals.userId as string | undefined;
    if (userId === undefined) return next();
    if (this.closed.size > 0 && this.closed.has(userId)) return next(erasurePending());
    // Only writes are waited for (a read changes nothing an erasure deletes): reads pay one lookup, not a listener.
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    this.inFlight.set(userId, (this.inFlight.get(userId) ?? 0) + 1);
    // 'close' comes once, however the answer ends (sent, failed, or its client gone).
    res.once('close', () => this.leave(userId));
    next();
  };

  /** Refuses the user's new requests and resolves once their writes under way have ended. */
  close(userId: string): Promise<void> {
    let entry = this.closed.get(userId);
    if (!entry) {
      let resolve!: () => void;
      const drained = new Promise<void>((r) => (resolve = r));
      this.closed.set(userId, (entry = { drained, resolve }));
      if (!this.inFlight.has(userId)) resolve();
    }
    return entry.drained;
  }

  /** The user's requests are taken again. */
  open(userId: string): void {
    this.closed.delete(userId);
  }

  private leave(userId: string): void {
    const left = (this.inFlight.get(userId) ?? 1) - 1;
    if (left > 0) return void this.inFlight.set(userId, left);
    this.inFlight.delete(userId);
    this.closed.get(userId)?.resolve();
  }
}
