import type { NextFunction, Request, Response } from 'express';
import { type Span, trace } from '@opentelemetry/api';
import { DEBUG_SPANS_HEADER, METRICS, debugSpanCapture, encodeDebugSpans, recordHistogram, requestMetricAttributes } from '@udp/telemetry';

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
 * `addRequestMetricAttributes`), and the name of a recorded server span after the route that answered
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
      if (recording && route) server!.updateName(spanNames.get(res) ?? `${req.method} ${route}`).setAttribute('http.route', route);
      if (options.handBackDebugSpans && server) handBackDebugSpans(req, this, server);
      return (writeHead as (...a: unknown[]) => Response).apply(this, args);
    } as Response['writeHead'];
    // 'close' comes after 'finish', and alone when the client went away before the answer was complete.
    res.once('close', () => {
      recordHistogram(METRICS.httpServerRequestDuration, (performance.now() - started) / 1000, {
        'http.request.method': KNOWN_METHODS.has(req.method) ? req.method : '_OTHER',
        ...(route && { 'http.route': route }),
        ...(res.headersSent ? { 'http.response.status_code': res.statusCode } : { 'error.type': 'aborted' }),
        ...(res.headersSent && res.statusCode >= 500 && { 'error.type': String(res.statusCode) }),
        'udp.service': service,
        ...requestMetricAttributes(res),
      });
    });
    next();
  };
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
