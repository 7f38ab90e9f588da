import type { NextFunction, Request, Response } from 'express';
import { trace } from '@opentelemetry/api';
import { DEBUG_SPANS_HEADER, debugSpanCapture, encodeDebugSpans } from '@udp/telemetry';

/**
 * A service hands the spans of a call back to the gateway that asked (request header `x-udp-debug-spans: 1`):
 * when the answer's headers are written, the spans of this call seen in this process (those under its server span,
 * collected by that span's id, not by the trace id a caller could share with other calls) go into the response
 * header of the same name (gzip + base64). The gateway drops that request header from clients and removes the
 * response header before answering, so neither crosses the public edge.
 */
export function debugSpansHandback() {
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.header(DEBUG_SPANS_HEADER) !== '1') return next();
    // In a middleware the active span is the HTTP server span (middleware layers make no span of their own).
    const server = trace.getActiveSpan();
    const spanId = server?.spanContext().spanId;
    if (!server || !spanId) return next();
    const writeHead = res.writeHead;
    res.writeHead = function (this: Response, ...args: unknown[]) {
      // The server span is still open (observeServerRequests, mounted after this, has named it already).
      server.setAttribute('http.response.status_code', this.statusCode);
      if (!this.headersSent) this.setHeader(DEBUG_SPANS_HEADER, encodeDebugSpans(debugSpanCapture.collect(spanId)));
      return (writeHead as (...a: unknown[]) => Response).apply(this, args);
    } as Response['writeHead'];
    next();
  };
}
