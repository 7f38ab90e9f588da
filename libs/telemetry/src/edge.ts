import { BlockList, isIP, type Server, type Socket } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type Span,
  type SpanContext,
  type Tracer,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  context,
  propagation,
  trace,
} from '@opentelemetry/api';
import { type IdGenerator, type Sampler, SamplingDecision } from '@opentelemetry/sdk-trace-base';
import { HEAD_DECIDED, markDebugRequested, isDebugRequested } from './sampling';

/**
 * The edge of every HTTP server of ours, for tracing: the gateway's and, in the distributed mode, each service's.
 * OpenTelemetry's HTTP instrumentation is not used for incoming requests (it made a span, its attributes and a context
 * switch for every request, recorded or not: docs/performance.md, "Tracing"). `traceRequest` asks the head sampler
 * first, on a trace id it chose, and only a trace the sampler records gets a SERVER span, made active for the request;
 * any other request keeps its trace id alone (its log lines, the next hop's `traceparent`, sampled flag off).
 *
 * The public edge (docs/architecture.md, "Tracing at the public edge"): every request that reaches the gateway's
 * server from a caller that is not trusted starts a new trace. Its `traceparent`, `tracestate` and `baggage` are not
 * continued: a client could otherwise choose the trace id of its calls (and join other calls' traces), mark them
 * sampled, and send baggage to the services. A caller's valid `traceparent` is kept as a link of the gateway's
 * server span only. Callers whose address is in TRACE_TRUSTED_CALLERS (an ingress or a service of ours that
 * propagates its own traces) are continued as before. Internal hops (gateway -> services) are not edges: they
 * always continue the gateway's trace.
 */

/** Sockets accepted by a public edge server: whether the peer is a trusted caller. */
const edgeSockets = new WeakMap<Socket, boolean>();

/** Addresses and CIDR ranges (`10.0.0.0/8`, `::1`, `fd00::/8`), comma separated; throws on a malformed entry. */
export function parseTrustedCallers(value: string | undefined): BlockList {
  const list = new BlockList();
  for (const entry of (value ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address);
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
    if (!family || extra !== undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) {
      throw new Error(`TRACE_TRUSTED_CALLERS: ${entry} is not an address or CIDR range (e.g. 10.0.0.0/8, ::1)`);
    }
    list.addSubnet(address, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

/** Marks a listening server as the public edge: the trace context of its untrusted callers is not continued. */
export function markPublicEdge(server: Server, trustedCallers: BlockList = new BlockList()): void {
  const mark = (socket: Socket) => edgeSockets.set(socket, isTrusted(trustedCallers, socket.remoteAddress));
  server.on('connection', mark);
  // A TLS server hands its requests the TLS socket, not the TCP one.
  server.on('secureConnection', mark);
}

function isTrusted(list: BlockList, address: string | undefined): boolean {
  if (!address) return false;
  // An IPv4 peer on a dual-stack socket shows as ::ffff:a.b.c.d.
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  return v4 ? list.check(v4, 'ipv4') : list.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

/** What startTracing hands the edge: the head sampler, the tracer and the ids the SDK gives root spans. */
export interface EdgeTracing {
  sampler: Sampler;
  tracer: Tracer;
  ids: EdgeIdGenerator;
}
let edgeTracing: EdgeTracing | null = null;
export function setEdgeTracing(tracing: EdgeTracing | null): void {
  edgeTracing = tracing;
}

/**
 * The SDK's ids, except that the next root span may take the trace id the edge already chose (and sampled on):
 * `startSpan` is synchronous, so the id set just before is the one it takes.
 */
export class EdgeIdGenerator implements IdGenerator {
  next: string | undefined;
  constructor(private readonly random: IdGenerator) {}
  generateTraceId(): string {
    const id = this.next ?? this.random.generateTraceId();
    this.next = undefined;
    return id;
  }
  generateSpanId(): string {
    return this.random.generateSpanId();
  }
  newTraceId(): string {
    return this.random.generateTraceId();
  }
}

/** The trace of one incoming request: its id, and its SERVER span when the trace is recorded. */
export interface RequestTrace {
  traceId: string;
  /** Only in a recorded trace; active while the request is handled. */
  span?: Span;
}
const requestTraces = new WeakMap<IncomingMessage, RequestTrace>();

/** The request's trace as its edge decided it (none where tracing is off). */
export function requestTraceOf(req: IncomingMessage): RequestTrace | undefined {
  return requestTraces.get(req);
}

/**
 * The request's span: the recorded SERVER span, or, in a trace not recorded, a non-recording span of its trace id
 * (made only when asked: a handler that runs work under the request's trace, e.g. a personalisation call).
 */
export function requestSpanOf(req: IncomingMessage): Span | undefined {
  const t = requestTraces.get(req);
  if (!t || t.span || !edgeTracing) return t?.span;
  return trace.wrapSpanContext({ traceId: t.traceId, spanId: edgeTracing.ids.generateSpanId(), traceFlags: TraceFlags.NONE });
}

/**
 * The `traceparent` a hop over HTTP sends for a trace not recorded: the sampled flag off, so that the next process
 * does not record it either (a recorded trace's context is sent by the HTTP client instrumentation).
 */
export function unrecordedTraceparent(req: IncomingMessage): string | undefined {
  const t = requestTraces.get(req);
  if (!t || t.span || !edgeTracing) return undefined;
  return `00-${t.traceId}-${edgeTracing.ids.generateSpanId()}-00`;
}

/**
 * A server's first middleware: decides the request's trace once. The parent is the caller's context (none from an
 * untrusted caller at the public edge); the head sampler is asked on the trace id the SERVER span would get, and the
 * span is made only when the trace is recorded (the sampler's answer is handed to it, not asked again). A recorded
 * request runs in its span's context, its request and response events too, and the span ends with the answer.
 */
export function traceRequest(req: IncomingMessage, res: ServerResponse, next: () => void): void {
  const tracing = edgeTracing;
  if (!tracing) return next();
  const headers = req.headers;
  const extracted = propagation.extract(ROOT_CONTEXT, headers);
  let parent = extracted;
  let caller: SpanContext | undefined;
  if (edgeSockets.get(req.socket) === false) {
    // An untrusted caller: only the debug mark is kept, its own trace as a link.
    const theirs = trace.getSpanContext(extracted);
    if (theirs && trace.isSpanContextValid(theirs)) caller = theirs;
    parent = isDebugRequested(extracted) ? markDebugRequested(ROOT_CONTEXT) : ROOT_CONTEXT;
  }
  const remote = trace.getSpanContext(parent);
  const continued = remote !== undefined && trace.isSpanContextValid(remote);
  const traceId = continued ? remote.traceId : tracing.ids.newTraceId();
  const method = req.method ?? 'GET';
  const path = (req.url ?? '/').split('?')[0];
  const attributes = { 'url.path': path };
  const decision = tracing.sampler.shouldSample(parent, traceId, method, SpanKind.SERVER, attributes, []);
  if (decision.decision === SamplingDecision.NOT_RECORD) {
    requestTraces.set(req, { traceId });
    return next();
  }
  if (!continued) tracing.ids.next = traceId;
  const span = tracing.tracer.startSpan(
    method,
    {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': method,
        'url.path': path,
        'url.scheme': 'encrypted' in req.socket ? 'https' : 'http',
        'network.peer.address': req.socket.remoteAddress,
        'user_agent.original': headers['user-agent'],
      },
      links: caller && [{ context: caller, attributes: { 'udp.link': 'caller traceparent (not continued at the edge)' } }],
    },
    parent.setValue(HEAD_DECIDED, decision),
  );
  tracing.ids.next = undefined;
  requestTraces.set(req, { traceId: span.spanContext().traceId, span });
  const active = trace.setSpan(parent, span);
  context.bind(active, req);
  context.bind(active, res);
  res.once('close', () => {
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  context.with(active, next);
}
