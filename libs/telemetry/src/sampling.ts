import {
  type Attributes,
  type Context,
  type SpanContext,
  type SpanKind,
  type TextMapGetter,
  type TextMapPropagator,
  SpanStatusCode,
  createContextKey,
  createTraceState,
  trace,
} from '@opentelemetry/api';
import {
  type ReadableSpan,
  type Sampler,
  SamplingDecision,
  type SamplingResult,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { LRUCache } from 'lru-cache';

/**
 * Sampling per endpoint from its measured request rate (issue 11): quiet endpoints keep every trace, busy ones a
 * fraction so that stored traces stay near `tracesPerEndpointPerS`; failed and slow calls of recorded traces are
 * always kept (every trace is recorded, so every failed or slow call kept, only with TRACE_RECORD_ALL).
 *
 * Two halves. The head (EndpointRateSampler) runs where a trace starts: it measures the endpoint's rate and writes
 * the keep probability into the W3C tracestate (`udp=p:<p>`), which travels with the trace context to every process.
 * With a collector the head records only the traces it keeps (the tail's rule on the same trace id) and those of calls
 * asking for their debug block: a trace left out costs a non-recording span, not a recorded one dropped at its end.
 * The tail (TailSamplingProcessor) runs in each process in front of the exporter: when the process's local root span of a trace ends, it keeps the trace's spans
 * if the trace id's random part falls under p (the same answer in every process, so kept traces are whole), or if a
 * span failed, or if the local root was slow; otherwise it drops them.
 *
 * Where nothing exports spans (no collector configured: the embedded default), the only reader of a span is the
 * debug block, so the head records only the traces of calls that ask for one (DebugRequestPropagator): the others
 * still get trace ids for the logs and for propagation, at the cost of a non-recording span.
 */
const STATE_KEY = 'udp';

/** Request header that asks a `/api/v1` call for its `debug_spans` block (its value is the codops secret). */
export const DEBUG_SECRET_HEADER = 'x-service-debug-secret';

const DEBUG_REQUESTED = createContextKey('udp.debug-requested');
export const markDebugRequested = (context: Context): Context => context.setValue(DEBUG_REQUESTED, true);
export const isDebugRequested = (context: Context): boolean => context.getValue(DEBUG_REQUESTED) === true;

/**
 * The head's answer for the span about to start, given by the edge that already asked (edge.ts, `traceRequest`): the
 * sampler is asked once per request, and its rate meter counts each request once.
 */
export const HEAD_DECIDED = createContextKey('udp.head-decided');

/**
 * Marks the context of an incoming request that carries the debug header, so the head sampler can record its trace.
 * It looks only at the header's presence (the gateway checks the secret and strips the header) and injects nothing.
 */
export class DebugRequestPropagator implements TextMapPropagator {
  inject(): void {}
  extract(context: Context, carrier: unknown, getter: TextMapGetter): Context {
    return getter.get(carrier, DEBUG_SECRET_HEADER) === undefined ? context : context.setValue(DEBUG_REQUESTED, true);
  }
  fields(): string[] {
    return [];
  }
}

/** Requests per second per key over a sliding window of one-second buckets. */
export class RateMeter {
  // A bound against unbounded keys: the keys seen least recently are dropped first.
  private readonly buckets = new LRUCache<string, { second: number; counts: number[]; since: number }>({ max: 10_000 });
  constructor(
    private readonly windowS = 10,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one request and returns the key's rate (per second) including it. */
  observe(key: string): number {
    const nowMs = this.now();
    const second = Math.floor(nowMs / 1000);
    let b = this.buckets.get(key);
    if (!b) {
      this.buckets.set(key, (b = { second, counts: new Array<number>(this.windowS).fill(0), since: nowMs }));
    }
    for (let s = b.second + 1; s <= second && s <= b.second + this.windowS; s++) b.counts[s % this.windowS] = 0;
    b.second = Math.max(b.second, second);
    b.counts[second % this.windowS]++;
    const total = b.counts.reduce((a, c) => a + c, 0);
    // Young keys: divide by the time actually observed (at least one second), not by the whole window.
    const spanS = Math.min(this.windowS, Math.max(1, (nowMs - b.since) / 1000));
    return total / spanS;
  }
}

export interface EndpointSamplerOptions {
  tracesPerEndpointPerS: number;
  /** The endpoint a root span belongs to; default: method and path with ids cut (see endpointKeyOf). */
  keyOf?: (name: string, attributes: Attributes) => string;
  /** Traces of an opted-out key are not recorded at all (no export, empty debug block). */
  optedOut?: (key: string) => boolean;
  /**
   * Which traces the head records. 'sampled' (an exporter, the default with a collector): the traces it keeps (the
   * trace id's random part under p, the tail's own rule) and those of calls asking for their debug block; any other
   * call costs a non-recording span only. 'debug' (nothing exports): only calls asking for their debug block. 'all'
   * (an in-process processor, TRACE_RECORD_ALL): every trace, so the tail can keep failed and slow calls whole.
   * Default 'all'.
   */
  record?: 'all' | 'sampled' | 'debug';
  meter?: RateMeter;
}

/** `/api/v1/{codops}/{endpoint}` keeps its codops and endpoint; other paths their first three segments. */
export function endpointKeyOf(name: string, attributes: Attributes): string {
  const raw = attributes['url.path'] ?? attributes['http.target'] ?? attributes['http.route'];
  if (typeof raw !== 'string') return name;
  const path = raw.split('?')[0];
  const segments = path.split('/').filter(Boolean);
  const depth = segments[0] === 'api' && segments[1] === 'v1' ? 4 : 3;
  return `/${segments.slice(0, depth).join('/')}`;
}

export class EndpointRateSampler implements Sampler {
  private readonly meter: RateMeter;
  constructor(private readonly options: EndpointSamplerOptions) {
    this.meter = options.meter ?? new RateMeter();
  }

  shouldSample(context: Context, traceId: string, name: string, _kind: SpanKind, attributes: Attributes): SamplingResult {
    const decided = context.getValue(HEAD_DECIDED) as SamplingResult | undefined;
    if (decided) return decided;
    const parent = trace.getSpanContext(context);
    const valid = parent !== undefined && trace.isSpanContextValid(parent);
    // A child in this process follows its trace: recorded when the trace is (the tail decides what is exported).
    if (valid && !parent.isRemote) return this.follow(parent);
    const record = this.options.record ?? 'all';
    const debug = context.getValue(DEBUG_REQUESTED) === true;
    // First, as it is the cheapest: most calls, where nothing but a debug block would read their spans.
    if (record === 'debug' && !debug && !valid) return { decision: SamplingDecision.NOT_RECORD };
    const key = (this.options.keyOf ?? endpointKeyOf)(name, attributes);
    // Opted out whoever the caller is: a sampled parent does not make an opted-out codops recorded.
    if (this.options.optedOut?.(key)) return { decision: SamplingDecision.NOT_RECORD };
    if (valid) {
      // A remote parent: our own head decided when the trace state carries our key (a service under the gateway),
      // and an unsampled parent is not recorded. Otherwise (a caller trusted at the edge, whose context the gateway
      // kept) the sampled flag decides nothing: the trace gets this head's decision, as if it started here, so no
      // caller can force a keep probability of 1 by sending a sampled traceparent without our state.
      if (parent.traceState?.get(STATE_KEY) !== undefined || !(parent.traceFlags & 1)) return this.follow(parent);
      if (record === 'debug' && !debug) return { decision: SamplingDecision.NOT_RECORD };
    }
    const rate = this.meter.observe(key);
    const p = Math.min(1, this.options.tracesPerEndpointPerS / rate);
    // The tail would drop this trace (same rule, same trace id): not recorded at all, unless its debug block is asked for.
    if (record === 'sampled' && !debug && traceRandomness(traceId) >= p) return { decision: SamplingDecision.NOT_RECORD };
    return {
      decision: SamplingDecision.RECORD_AND_SAMPLED,
      traceState: (valid && parent.traceState ? parent.traceState : createTraceState()).set(STATE_KEY, `p:${p.toFixed(6)}`),
      attributes: { 'sampling.endpoint': key, 'sampling.probability': Number(p.toFixed(6)) },
    };
  }

  private follow(parent: SpanContext): SamplingResult {
    return {
      decision: parent.traceFlags & 1 ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD,
      traceState: parent.traceState,
    };
  }

  toString(): string {
    return `EndpointRateSampler{${this.options.tracesPerEndpointPerS}/s}`;
  }
}

/** The keep probability a trace carries (1 when none: a trace that did not start behind our head sampler). */
export function keepProbabilityOf(span: ReadableSpan): number {
  const value = span.spanContext().traceState?.get(STATE_KEY);
  const match = value ? /^p:([0-9.]+)$/.exec(value) : null;
  return match ? Number(match[1]) : 1;
}

/** The trace id's last 13 hex digits as a number in [0, 1): random in W3C trace ids, the same in every process. */
export function traceRandomness(traceId: string): number {
  return parseInt(traceId.slice(-13), 16) / 16 ** 13;
}

export interface TailSamplingOptions {
  /** A local root span at least this long keeps its trace. */
  slowMs: number;
  /** Traces held while waiting for their local root; past it the oldest is decided at once. */
  maxPendingTraces?: number;
}

export class TailSamplingProcessor implements SpanProcessor {
  private readonly pending = new Map<string, ReadableSpan[]>();
  /** The decision of each trace recently ended, for its spans that end after its root. */
  private readonly decided = new LRUCache<string, boolean>({ max: 10_000 });
  readonly stats = { kept: 0, dropped: 0 };

  constructor(
    private readonly next: SpanProcessor,
    private readonly options: TailSamplingOptions,
  ) {}

  onStart(span: Span, context: Context): void {
    this.next.onStart(span, context);
  }

  onEnd(span: ReadableSpan): void {
    const traceId = span.spanContext().traceId;
    const known = this.decided.get(traceId);
    if (known !== undefined) {
      if (known) this.next.onEnd(span);
      return;
    }
    let spans = this.pending.get(traceId);
    if (!spans) {
      if (this.pending.size >= (this.options.maxPendingTraces ?? 5000)) {
        const oldest = this.pending.keys().next().value as string;
        this.decide(oldest, this.pending.get(oldest)!, undefined);
      }
      this.pending.set(traceId, (spans = []));
    }
    spans.push(span);
    const localRoot = !span.parentSpanContext || span.parentSpanContext.isRemote === true;
    if (localRoot) this.decide(traceId, spans, span);
  }

  private decide(traceId: string, spans: ReadableSpan[], root: ReadableSpan | undefined): void {
    this.pending.delete(traceId);
    const failed = spans.some(
      (s) =>
        s.status.code === SpanStatusCode.ERROR ||
        Number(s.attributes['http.response.status_code'] ?? s.attributes['http.status_code'] ?? 0) >= 500,
    );
    const slow = root !== undefined && root.duration[0] * 1000 + root.duration[1] / 1e6 >= this.options.slowMs;
    const keep = failed || slow || traceRandomness(traceId) < keepProbabilityOf(root ?? spans[0]);
    this.decided.set(traceId, keep);
    if (keep) {
      this.stats.kept++;
      for (const s of spans) this.next.onEnd(s);
    } else {
      this.stats.dropped++;
    }
  }

  async forceFlush(): Promise<void> {
    for (const [traceId, spans] of [...this.pending]) this.decide(traceId, spans, undefined);
    await this.next.forceFlush();
  }

  async shutdown(): Promise<void> {
    await this.forceFlush();
    await this.next.shutdown();
  }
}
