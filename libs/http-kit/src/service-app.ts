import { randomUUID } from 'node:crypto';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { ConcurrencyConflictError, DomainError } from '@udp/eventsourcing';
import { IDENTITY_HEADER, type InternalIdentity } from '@udp/auth';
import type { Logger } from '@udp/telemetry';
import { HttpError, sendProblem, unauthorized } from './problem';

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    log: Logger;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Request id (taken from X-Request-Id when well-formed, else new), echoed back and on every log line. */
export function requestContext(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const given = req.header('x-request-id');
    req.id = given && REQUEST_ID.test(given) ? given : randomUUID();
    // Made on first use: most requests never log, and a child logger per request is measurable.
    let child: Logger | undefined;
    Object.defineProperty(req, 'log', { configurable: true, get: () => (child ??= logger.child({ request_id: req.id })) });
    res.setHeader('x-request-id', req.id);
    if (logger.isLevelEnabled('info')) {
      // One access line per request; the path without its query string, which can hold personal data.
      const started = process.hrtime.bigint();
      res.once('finish', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        req.log.info({ method: req.method, path: req.originalUrl.split('?')[0], status: res.statusCode, ms: Math.round(ms * 10) / 10 }, 'request');
      });
    }
    next();
  };
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
      return next(new HttpError(415, 'Unsupported Media Type', `expected Content-Type application/json, got ${req.header('content-type') ?? 'none'}`));
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
    const verified = identity.verify(req.header(IDENTITY_HEADER));
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
    return sendProblem(res, status, title, error.message, error.field ? { errors: [{ field: error.field, message: error.message }] } : {});
  }
  if (error instanceof ConcurrencyConflictError) {
    res.setHeader('retry-after', '1');
    return sendProblem(res, 429, 'Too Many Requests', 'another request is updating the same data; retry shortly');
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
}

/** An Express app with the common edge: request id, JSON-only bodies, size limits. Add routes, then `finish`. */
export function createServiceApp(options: ServiceAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestContext(options.logger));
  app.use(jsonBodies(options.maxBodyBytes));
  return app;
}

export function finish(app: Express): Express {
  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}

/** `GET /health/`: 200 `UP` when every check passes (stores answer, projections current), else 503 `DOWN`. */
export function healthRoute(...checks: Array<() => boolean | Promise<boolean>>) {
  return async (_req: Request, res: Response) => {
    let up = true;
    for (const check of checks) up = up && (await Promise.resolve(check()).catch(() => false));
    res.status(up ? 200 : 503).type('text/plain').send(up ? 'UP' : 'DOWN');
  };
}
