import { BlockList, isIP, type Server, type Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import {
  type Context,
  type Span,
  type SpanContext,
  type TextMapGetter,
  type TextMapPropagator,
  type TextMapSetter,
  ROOT_CONTEXT,
  trace,
} from '@opentelemetry/api';

/**
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
/** Header objects of requests whose trace context is not continued, with the caller's context to link to. */
const untrusted = new WeakMap<object, SpanContext | null>();

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

/**
 * Called by the HTTP instrumentation for each incoming request before it reads the trace context: a request at the
 * edge from an untrusted caller has its headers marked, so the propagator ignores them.
 */
export function noteIncomingRequest(request: IncomingMessage): void {
  if (edgeSockets.get(request.socket) === false) untrusted.set(request.headers, null);
}

/** After the server span started: the caller's own trace, if it sent one, becomes a link (never the parent). */
export function linkCallerTrace(span: Span, request: unknown): void {
  const headers = (request as { headers?: unknown }).headers;
  const caller = typeof headers === 'object' && headers !== null ? untrusted.get(headers) : undefined;
  if (caller) span.addLink({ context: caller, attributes: { 'udp.link': 'caller traceparent (not continued at the edge)' } });
}

/** Extracts through `inner` except from the headers of an untrusted edge request: there, nothing (the caller's context is kept for the link). */
export class EdgePropagator implements TextMapPropagator {
  constructor(private readonly inner: TextMapPropagator) {}

  inject(context: Context, carrier: unknown, setter: TextMapSetter): void {
    this.inner.inject(context, carrier, setter);
  }

  extract(context: Context, carrier: unknown, getter: TextMapGetter): Context {
    if (typeof carrier === 'object' && carrier !== null && untrusted.has(carrier)) {
      const caller = trace.getSpanContext(this.inner.extract(ROOT_CONTEXT, carrier, getter));
      if (caller && trace.isSpanContextValid(caller)) untrusted.set(carrier, caller);
      return context;
    }
    return this.inner.extract(context, carrier, getter);
  }

  fields(): string[] {
    return this.inner.fields();
  }
}
