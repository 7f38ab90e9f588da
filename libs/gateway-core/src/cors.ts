import cors from 'cors';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { sendProblem } from '@udp/http-kit';

/**
 * What a browser app may send. Not `X-Service-Debug-Secret`: the debug block must never be enabled from a browser
 * client (request-trace-debug-block.md), and a secret in a web page is no secret; a browser cannot send it
 * cross-origin when it is not listed here.
 */
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Token-Type',
  'traceparent',
  'tracestate',
  'X-Request-Id',
  'If-None-Match',
];
/** Answer headers a browser app may read beyond the CORS-safelisted ones. */
export const CORS_EXPOSED_HEADERS = [
  'Retry-After',
  'X-Request-Id',
  'Sync-Token',
  'ETag',
  'Content-Disposition',
  'WWW-Authenticate',
  'Allow',
];
/** The methods of the OpenAPI document (HEAD goes with GET). */
export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'];
/** How long a browser may reuse a preflight answer (Chromium caps it at 2 h). */
export const CORS_MAX_AGE_S = 600;

/**
 * CORS headers for the configured origins (`CORS_ORIGINS`): an allowed origin is echoed with credentials allowed;
 * `*` alone means any origin, never with credentials (browsers refuse `*` with credentials, and it would let any
 * site act with a user's cookies). A disallowed origin gets no CORS header at all. Preflights go on to
 * `answerPreflight`, after the per-address rate limit, so that they count like any request.
 */
export function corsHeaders(origins: string[]): RequestHandler {
  const anyOrigin = origins.includes('*');
  const allowed = new Set(origins);
  const headers = cors({
    origin: anyOrigin ? '*' : (origin, callback) => callback(null, origin !== undefined && allowed.has(origin) ? origin : false),
    credentials: !anyOrigin,
    methods: CORS_METHODS,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: CORS_MAX_AGE_S,
    preflightContinue: true,
  });
  return (req: Request, res: Response, next: NextFunction) => {
    // The answer depends on the Origin (headers or none) whatever it is: a shared cache must not mix them up.
    if (!anyOrigin) res.vary('Origin');
    headers(req, res, next);
  };
}

/**
 * A preflight (OPTIONS with `Origin` and `Access-Control-Request-Method`) is answered here: 204 when `corsHeaders`
 * allowed its origin, else 403 problem+json without CORS headers (the browser then refuses the call).
 */
export function answerPreflight(req: Request, res: Response, next: NextFunction): void {
  if (req.method !== 'OPTIONS' || req.headers.origin === undefined || req.headers['access-control-request-method'] === undefined)
    return next();
  if (res.getHeader('access-control-allow-origin') !== undefined) return void res.status(204).setHeader('content-length', '0').end();
  sendProblem(res, 403, 'Forbidden', 'this origin may not call the API from a browser (it is not in CORS_ORIGINS)');
}
