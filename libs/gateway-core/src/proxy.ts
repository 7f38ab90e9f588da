import http, { type IncomingHttpHeaders } from 'node:http';
import { type Socket, isIP, isIPv6 } from 'node:net';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { SpanKind, context, trace } from '@opentelemetry/api';
import { IDENTITY_HEADER } from '@udp/auth';
import { HttpError, handOverInProcess } from '@udp/http-kit';
import { DEBUG_SECRET_HEADER, DEBUG_SPANS_HEADER, unrecordedTraceparent } from '@udp/telemetry';

/** Headers a client may not pass on: hop-by-hop ones, credentials, and anything only the gateway may set. */
const DROPPED = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'upgrade',
  'host',
  'authorization',
  'cookie',
  'token-type',
  IDENTITY_HEADER,
  DEBUG_SECRET_HEADER,
  DEBUG_SPANS_HEADER,
  // Who the client is, as the client itself claims: replaced by what the gateway knows (`forwardedHeaders`).
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-real-ip',
]);
/**
 * A caller's W3C trace context is not passed on as it came: the gateway starts its own trace (a caller's context is
 * continued only from TRACE_TRUSTED_CALLERS, libs/telemetry/src/edge.ts), and sends the gateway's (`forward`). Without this, a caller's `tracestate` and `baggage` would reach the service whenever the gateway's
 * context has none of its own to write over them.
 */
const CALLER_TRACE_CONTEXT = ['traceparent', 'tracestate', 'baggage'];
/** What a hop over HTTP does not pass on to the service. */
const NOT_FORWARDED = new Set([...DROPPED, ...CALLER_TRACE_CONTEXT]);
/** What an in-process hand-over does not pass on: the same, except the host, which stays the client's. */
const NOT_HANDED_OVER = new Set([...NOT_FORWARDED].filter((name) => name !== 'host'));

/**
 * The client's headers the service is told, in a new object: deleting from the request's own would turn it into a
 * slow dictionary for every read after (the credentials are always there to delete).
 */
function headersPassedOn(sent: IncomingHttpHeaders, notPassed: Set<string>): IncomingHttpHeaders {
  const told: IncomingHttpHeaders = {};
  for (const name in sent) if (!notPassed.has(name)) told[name] = sent[name];
  return told;
}
/** Answer headers that stay inside: the spans a service hands back for a debug block. */
const INTERNAL_ANSWER_HEADERS = new Set(['connection', 'keep-alive', DEBUG_SPANS_HEADER]);

const agent = new http.Agent({ keepAlive: true, maxSockets: 256, keepAliveMsecs: 10_000 });

/** When the gateway handed each request on, and when the service's answer was complete. */
const upstreamTimes = new WeakMap<Response, { started: bigint; ended?: bigint }>();

/** Milliseconds the service took for this request (still running: so far), for the gateway's access line. */
export function upstreamMs(res: Response): number | undefined {
  const times = upstreamTimes.get(res);
  if (!times) return undefined;
  return Math.round(Number((times.ended ?? process.hrtime.bigint()) - times.started) / 1e5) / 10;
}

/**
 * `X-Forwarded-For` and `Forwarded` (RFC 7239) for the service: the client as the gateway determined it (`req.ip`),
 * then each trusted proxy on the way, the gateway's own peer last. What an untrusted peer claims in its own
 * `X-Forwarded-For` is not passed on (Express's `trust proxy`, set from TRUSTED_PROXIES, decides how far the
 * client's header is believed: without it the chain is the peer alone).
 */
export function forwardedHeaders(req: Request): Record<string, string> {
  const peer = req.socket.remoteAddress;
  // An entry that is no address (a client inside a trusted range can write anything there) is passed on as `unknown`.
  const chain = (peer === undefined ? req.ips : [...req.ips, peer]).map((address) => (isIP(address) ? address : 'unknown'));
  const node = (address: string) => (isIPv6(address) ? `"[${address}]"` : address);
  return {
    'x-forwarded-for': chain.join(', '),
    forwarded: chain.map((address, i) => `for=${node(address)}${i === 0 ? `;proto=${req.protocol}` : ''}`).join(', '),
    'x-forwarded-proto': req.protocol,
  };
}

/** The forwarding headers of each connection whose peer is the client: the same for all its requests. */
const byConnection = new WeakMap<Socket, Record<string, string>>();

/** `forwardedHeaders` when no proxy is trusted: they name the peer alone, so they are made once per connection. */
function peerForwarded(req: Request): Record<string, string> {
  let headers = byConnection.get(req.socket);
  if (headers === undefined) {
    headers = forwardedHeaders(req);
    byConnection.set(req.socket, headers);
  }
  return headers;
}

export interface ProxyTarget {
  /** Base address of the service, e.g. http://127.0.0.1:8081 */
  url: string;
  timeoutMs: number;
  /** Whether the gateway trusts proxies in front of it (TRUSTED_PROXIES): else the forwarding headers name the peer. */
  trustsProxies?: boolean;
}

/**
 * Streams the request to the service and its answer back. The service receives the original path and
 * query, the request id, and the headers the gateway adds (`extra`), never the client's credentials.
 */
export function forward(target: ProxyTarget, extra: (req: Request, res: Response) => Record<string, string>) {
  const base = new URL(target.url);
  return (req: Request, res: Response, next: NextFunction) => {
    const headers: http.OutgoingHttpHeaders = headersPassedOn(req.headers, NOT_FORWARDED);
    Object.assign(headers, extra(req, res), target.trustsProxies ? forwardedHeaders(req) : peerForwarded(req), { 'x-request-id': req.id });
    // A trace not recorded has no span to send on: its id goes with the sampled flag off, so the service keeps the
    // trace id and does not record it either (a recorded trace's context is sent by the HTTP client instrumentation).
    const unrecorded = unrecordedTraceparent(req);
    if (unrecorded) headers.traceparent = unrecorded;
    const times: { started: bigint; ended?: bigint } = { started: process.hrtime.bigint() };
    upstreamTimes.set(res, times);
    const options: http.RequestOptions = {
      protocol: base.protocol,
      hostname: base.hostname,
      port: base.port,
      method: req.method,
      path: req.originalUrl,
      headers,
      agent,
      timeout: target.timeoutMs,
    };
    const answered = (answer: http.IncomingMessage) => {
      res.status(answer.statusCode ?? 502);
      for (const [name, value] of Object.entries(answer.headers))
        if (value !== undefined && !INTERNAL_ANSWER_HEADERS.has(name)) res.setHeader(name, value);
      answer.once('end', () => (times.ended = process.hrtime.bigint()));
      answer.pipe(res);
    };
    // Only a recorded trace goes through `http.request`, which the HTTP client instrumentation wraps (its CLIENT span
    // and context). An unrecorded one, nearly every request, is made as `http.request` would make it, without the
    // wrapper: for no span at all, it parsed the options into a URL, built the span's attributes, and bound the
    // request's and the answer's events to a context and listened to them.
    const upstream = unrecorded ? new http.ClientRequest(options, answered) : http.request(options, answered);
    upstream.on('timeout', () => upstream.destroy(new HttpError(504, 'Gateway Timeout', 'the service did not answer in time')));
    upstream.on('error', (error) => {
      if (res.headersSent) return res.destroy(error);
      next(error instanceof HttpError ? error : new HttpError(502, 'Bad Gateway', 'the service is unavailable'));
    });
    // A client gone before its answer (cut off by the request timeout, or left) takes the service's request with it:
    // else the service would wait for the rest of the body until its own timeout.
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  };
}

/**
 * The embedded mode's transport: the service runs in this process, so the request goes straight to its
 * handler instead of through a loopback HTTP hop. The service sees the same path and headers as over HTTP
 * (credentials dropped); the request keeps the context the gateway made for it (`handOverInProcess`): its id, caller,
 * access line and observation, so the service's edge neither verifies a signed identity nor repeats them.
 */
export function dispatchInProcess(
  handler: RequestHandler,
  callerOf: (res: Response) => { userId: string } | undefined,
  serviceUrl = '',
  trustsProxies = false,
) {
  const tracer = trace.getTracer('udp-gateway');
  return (req: Request, res: Response, next: NextFunction) => {
    // Read before the client's own forwarding headers go: with trusted proxies, req.ip and req.protocol come from them.
    const forwarded = trustsProxies ? forwardedHeaders(req) : peerForwarded(req);
    const told = headersPassedOn(req.headers, NOT_HANDED_OVER);
    Object.assign(told, forwarded);
    told['x-request-id'] = req.id;
    req.headers = told;
    // The gateway mounted this route under a prefix; the service routes on the full path, from the root as over HTTP
    // (its routes are named without the gateway's prefix in front: `/api/things/:id`, not `/api/things/api/things/:id`).
    req.url = req.originalUrl;
    req.baseUrl = '';
    const times: { started: bigint; ended?: bigint } = { started: process.hrtime.bigint() };
    upstreamTimes.set(res, times);
    // Ended when the answer is, ahead of the access line's own listener (registered earlier): so `upstream_ms`, read by
    // that line, never counts the time the line itself takes, and never exceeds the line's `ms`.
    res.prependOnceListener('finish', () => (times.ended ??= process.hrtime.bigint()));
    // A trace not recorded gets no span and no context switch; a recorded one a SERVER span for the service, as its
    // own HTTP instrumentation would make over a real hop (named, ended and given its status by the gateway's
    // observation, http-kit's service-edge.ts).
    if (trace.getActiveSpan()?.isRecording() !== true) {
      handOverInProcess(req, callerOf(res));
      return handler(req, res, next);
    }
    const span = tracer.startSpan(`${req.method} ${req.baseUrl}`, {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': req.method,
        'url.path': req.originalUrl.split('?')[0],
        'server.address': serviceUrl,
        'udp.dispatch': 'in-process',
      },
    });
    handOverInProcess(req, callerOf(res), span);
    context.with(trace.setSpan(context.active(), span), () => handler(req, res, next));
  };
}

export interface ServiceHealth {
  status: 'UP' | 'DOWN';
  /** The service's own parts (event_store, read_models, bus, projections) when it named them. */
  checks?: Record<string, string>;
}

/** GET <url>/health/: UP on a 200 within the timeout; else DOWN, with the parts the service named in its 503. */
export function serviceHealth(url: string, timeoutMs = 2000): Promise<ServiceHealth> {
  return new Promise((resolve) => {
    const probe = http.get(`${url.replace(/\/$/, '')}/health/`, { agent, timeout: timeoutMs }, (answer) => {
      if (answer.statusCode === 200) {
        answer.resume();
        return resolve({ status: 'UP' });
      }
      let body = '';
      answer.setEncoding('utf8');
      answer.on('data', (chunk: string) => {
        if (body.length < 10_000) body += chunk;
      });
      answer.on('end', () => resolve({ status: 'DOWN', ...checksIn(body) }));
      answer.on('error', () => resolve({ status: 'DOWN' }));
    });
    probe.on('timeout', () => probe.destroy());
    probe.on('error', () => resolve({ status: 'DOWN' }));
  });
}

function checksIn(body: string): { checks?: Record<string, string> } {
  try {
    const checks = (JSON.parse(body) as { checks?: unknown }).checks;
    if (checks && typeof checks === 'object') return { checks: Object.fromEntries(Object.entries(checks).map(([k, v]) => [k, String(v)])) };
  } catch {
    // not the problem+json of one of our services: the status alone says it
  }
  return {};
}
