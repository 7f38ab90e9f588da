import type { Request, Response } from 'express';
import type { Span } from '@opentelemetry/api';
import { DEBUG_SPANS_HEADER, debugSpanCapture, encodeDebugSpans } from '@udp/telemetry';

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
