import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { IDENTITY_HEADER, type InternalIdentity } from '@udp/auth';
import type { Logger } from '@udp/telemetry';
import { illFormedJsonBody, refuseNonUtf8Body } from './input-text';
import { HttpError, badRequest, unauthorized } from './problem';

/*
 * The edge of a service: what every request passes, in this order, before the service's routes see it. The
 * gateway's hand-over is accepted first (in-process or over HTTP: the one place that asks which), then the
 * request's context (id, logger, access line), the path check, the JSON body, and the caller.
 */

/**
 * Requests the embedded gateway hands to a service in the same process. The gateway has already given them an
 * id, a logger and an access-log line, checked the path, and authenticated the caller (here, when the route is
 * not public). Only code in this process can put a request here.
 */
const handedOver = new WeakMap<Request, { userId?: string }>();

export function handOverInProcess(req: Request, caller: { userId: string } | undefined): void {
  handedOver.set(req, { userId: caller?.userId });
}

/**
 * A service's first middleware, and the one place that asks how the request came from the gateway. Over HTTP:
 * the request id the gateway sent (echoed back) and the caller of the identity header it signed. Handed over in
 * process: the gateway's request id is kept (the gateway answers with it) and its caller is taken as it is,
 * neither signed nor verified. The caller lands in `res.locals.userId`, where `requireCaller` looks for it.
 * `identity` is absent in a service that has public routes only.
 */
export function acceptFromGateway(identity: InternalIdentity | undefined) {
  return (req: Request, res: Response, next: NextFunction) => {
    const handed = handedOver.get(req);
    if (handed) {
      if (handed.userId) res.locals.userId = handed.userId;
      return next();
    }
    takeRequestId(req, res);
    const verified = identity?.verify(req.header(IDENTITY_HEADER));
    if (verified) res.locals.userId = verified.userId;
    next();
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
    // Made on first use: most requests never log, and a child logger per request is measurable.
    let child: Logger | undefined;
    const log = () => (child ??= logger.child({ request_id: req.id }));
    Object.defineProperty(req, 'log', { configurable: true, get: log });
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
 * 400 before any route or parameter decoding sees it, in the gateway and in every service alike. (A request the
 * embedded gateway hands over in process passed its check already; checking the same path again costs well
 * under a microsecond.)
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
