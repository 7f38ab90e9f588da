import type { NextFunction, Request, Response } from 'express';
import { ConcurrencyConflictError, DomainError } from '@udp/eventsourcing';
import { StoreUnavailableError } from '@udp/eventstore';
import { HttpError, sendProblem } from './problem';

const DOMAIN_STATUS: Record<DomainError['kind'], [number, string]> = {
  NotFound: [404, 'Not Found'],
  Invalid: [400, 'Bad Request'],
  Conflict: [409, 'Conflict'],
  LimitExceeded: [400, 'Limit Exceeded'],
  TooLarge: [413, 'Content Too Large'],
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
