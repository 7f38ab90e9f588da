import { createHash } from 'node:crypto';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, createTraceState, defaultTextMapGetter, trace } from '@opentelemetry/api';
import { SamplingDecision, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  DebugRequestPropagator,
  EndpointRateSampler,
  RateMeter,
  TailSamplingProcessor,
  endpointKeyOf,
  keepProbabilityOf,
} from './sampling';
import { redactAttributes } from './redaction';

// Trace ids as random as the SDK's, but the same every run (the n-th id is fixed), so the counts are too.
let sequence = 0;
const traceId = () => createHash('sha256').update(`trace-${sequence++}`).digest('hex').slice(0, 32);

function rootSpan(id: string, state: string, options: { ms?: number; error?: boolean } = {}): ReadableSpan {
  const ms = options.ms ?? 5;
  return {
    name: 'GET',
    kind: SpanKind.SERVER,
    attributes: {},
    links: [],
    events: [],
    spanContext: () => ({ traceId: id, spanId: '0123456789abcdef', traceFlags: 1, traceState: createTraceState(state) }),
    parentSpanContext: undefined,
    startTime: [0, 0],
    endTime: [0, ms * 1e6],
    duration: [Math.floor(ms / 1000), (ms % 1000) * 1e6],
    status: { code: options.error ? SpanStatusCode.ERROR : SpanStatusCode.UNSET },
    ended: true,
  } as unknown as ReadableSpan;
}

function sink() {
  const kept: ReadableSpan[] = [];
  const processor: SpanProcessor = {
    onStart: () => undefined,
    onEnd: (s) => kept.push(s),
    forceFlush: async () => undefined,
    shutdown: async () => undefined,
  };
  return { kept, processor };
}

describe('sampling per endpoint from its measured rate', () => {
  it('keeps every trace of a quiet endpoint and about target/rate of a busy one', () => {
    let now = 0;
    const sampler = new EndpointRateSampler({ tracesPerEndpointPerS: 10, meter: new RateMeter(10, () => now) });
    const { kept, processor } = sink();
    const tail = new TailSamplingProcessor(processor, { slowMs: 1000 });
    const run = (path: string) => {
      const result = sampler.shouldSample(ROOT_CONTEXT, '', 'GET', SpanKind.SERVER, { 'url.path': path });
      tail.onEnd(rootSpan(traceId(), result.traceState!.serialize()));
    };
    // 20 s of synthetic load: /busy at 1000 requests/s, /quiet at 2 requests/s.
    let busyKept = 0;
    for (let ms = 0; ms < 20_000; ms++) {
      now = ms;
      const before = kept.length;
      run('/api/v1/zzebu/busy');
      busyKept += kept.length - before;
      if (ms % 500 === 0) run('/api/v1/zzebu/quiet');
    }
    const quietKept = kept.length - busyKept;
    process.stdout.write(
      `sampler: busy endpoint (1000/s, 20 s, target 10/s) kept ${busyKept} of 20000; quiet endpoint kept ${quietKept} of 40\n`,
    );
    expect(quietKept).toBe(40);
    // Aim: 10 per second over 20 s = 200 (the first seconds keep more while the rate is being measured).
    expect(busyKept).toBeGreaterThan(150);
    expect(busyKept).toBeLessThan(320);
  });

  it('always keeps failed and slow calls', () => {
    const { kept, processor } = sink();
    const tail = new TailSamplingProcessor(processor, { slowMs: 1000 });
    for (let i = 0; i < 100; i++) tail.onEnd(rootSpan(traceId(), 'udp=p:0.000000', { error: true }));
    for (let i = 0; i < 100; i++) tail.onEnd(rootSpan(traceId(), 'udp=p:0.000000', { ms: 1500 }));
    for (let i = 0; i < 100; i++) tail.onEnd(rootSpan(traceId(), 'udp=p:0.000000'));
    expect(kept).toHaveLength(200);
    expect(tail.stats).toEqual({ kept: 200, dropped: 100 });
  });

  it('reads the keep probability from the tracestate, 1 without one', () => {
    expect(keepProbabilityOf(rootSpan(traceId(), 'udp=p:0.250000'))).toBe(0.25);
    expect(keepProbabilityOf(rootSpan(traceId(), ''))).toBe(1);
  });

  it('keys /api/v1 paths by codops and endpoint, others by three segments, never by query', () => {
    expect(endpointKeyOf('GET', { 'url.path': '/api/v1/zzebu/trending' })).toBe('/api/v1/zzebu/trending');
    expect(endpointKeyOf('GET', { 'http.target': '/api/history/v2/urn:a?x=1' })).toBe('/api/history/v2');
  });

  it("does not record opted-out endpoints, even under a sampled remote parent (ours or a caller's)", () => {
    const sampler = new EndpointRateSampler({ tracesPerEndpointPerS: 10, optedOut: (key) => key.startsWith('/api/v1/zzoff/') });
    const attributes = { 'url.path': '/api/v1/zzoff/trending' };
    expect(sampler.shouldSample(ROOT_CONTEXT, '', 'GET', SpanKind.SERVER, attributes).decision).toBe(SamplingDecision.NOT_RECORD);
    for (const state of ['', 'udp=p:1.000000']) {
      const parent = trace.setSpanContext(ROOT_CONTEXT, {
        traceId: traceId(),
        spanId: '0123456789abcdef',
        traceFlags: TraceFlags.SAMPLED,
        isRemote: true,
        traceState: createTraceState(state),
      });
      expect(sampler.shouldSample(parent, '', 'GET', SpanKind.SERVER, attributes).decision).toBe(SamplingDecision.NOT_RECORD);
    }
  });

  it("gives a sampled remote parent without our tracestate the endpoint's keep probability, not 1", () => {
    let now = 0;
    const sampler = new EndpointRateSampler({ tracesPerEndpointPerS: 10, meter: new RateMeter(10, () => now) });
    const attributes = { 'url.path': '/api/v1/zzebu/busy' };
    // A busy endpoint: 1000 calls in one second.
    for (let i = 0; i < 1000; i++) sampler.shouldSample(ROOT_CONTEXT, '', 'GET', SpanKind.SERVER, attributes);
    now = 999;
    const caller = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: traceId(),
      spanId: '0123456789abcdef',
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
      traceState: createTraceState('vendor=x'),
    });
    const result = sampler.shouldSample(caller, '', 'GET', SpanKind.SERVER, attributes);
    expect(result.decision).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    const state = result.traceState!;
    expect(state.get('vendor')).toBe('x');
    expect(keepProbabilityOf(rootSpan(traceId(), state.serialize()))).toBeLessThan(0.02);
  });
});

describe('where nothing exports spans, only calls that ask for their debug block are recorded', () => {
  const sampler = new EndpointRateSampler({ tracesPerEndpointPerS: 10, record: 'debug' });
  const propagator = new DebugRequestPropagator();
  const incoming = (headers: Record<string, string>) => propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
  const decide = (context = ROOT_CONTEXT) =>
    sampler.shouldSample(context, traceId(), 'GET', SpanKind.SERVER, { 'url.path': '/api/v1/zzebu/trending' }).decision;

  it('given a call without the debug header, when its root span starts, then it is not recorded', () => {
    expect(decide(incoming({ accept: 'application/json' }))).toBe(SamplingDecision.NOT_RECORD);
  });

  it('given a call with the debug header (any value: the gateway checks it), then its trace is recorded', () => {
    expect(decide(incoming({ 'x-service-debug-secret': 'whatever' }))).toBe(SamplingDecision.RECORD_AND_SAMPLED);
  });

  it('given a recorded parent of our trace (our tracestate), a span is recorded; given a non-recorded one, it is not', () => {
    const parent = (flags: TraceFlags, isRemote: boolean) =>
      trace.setSpanContext(ROOT_CONTEXT, {
        traceId: traceId(),
        spanId: '0123456789abcdef',
        traceFlags: flags,
        isRemote,
        traceState: createTraceState('udp=p:0.500000'),
      });
    for (const remote of [true, false]) {
      expect(decide(parent(TraceFlags.SAMPLED, remote))).toBe(SamplingDecision.RECORD_AND_SAMPLED);
      expect(decide(parent(TraceFlags.NONE, remote))).toBe(SamplingDecision.NOT_RECORD);
    }
  });

  it('given a sampled remote parent without our tracestate (a caller), then it is not recorded unless it asks for its block', () => {
    const foreign = trace.setSpanContext(ROOT_CONTEXT, { traceId: traceId(), spanId: '0123456789abcdef', traceFlags: 1, isRemote: true });
    expect(decide(foreign)).toBe(SamplingDecision.NOT_RECORD);
  });

  it('with every trace asked for (the default; TRACE_RECORD_ALL), every trace is recorded', () => {
    const recordAll = new EndpointRateSampler({ tracesPerEndpointPerS: 10 });
    expect(recordAll.shouldSample(ROOT_CONTEXT, traceId(), 'GET', SpanKind.SERVER, { 'url.path': '/a' }).decision).toBe(
      SamplingDecision.RECORD_AND_SAMPLED,
    );
  });
});

describe('redaction', () => {
  it('removes query strings, statements and filters', () => {
    const attributes = redactAttributes({
      'url.full': 'http://h/api/history/v2?limit=5',
      'url.query': 'limit=5',
      'db.statement': '{"userId":"tess"}',
      'db.query.text': 'SELECT * FROM events WHERE stream = ?',
      'db.mongodb.filter': '{}',
      'db.query.parameter.0': 'tess',
      'url.path': '/api/history/v2',
    });
    expect(attributes).toEqual({ 'url.full': 'http://h/api/history/v2', 'url.path': '/api/history/v2' });
  });
});

describe('with an exporter, the head records only the traces the tail would keep', () => {
  it('given a busy endpoint, records about target/rate of its traces, each one the tail keeps, and every one asking for its block', () => {
    let now = 0;
    const sampler = new EndpointRateSampler({ tracesPerEndpointPerS: 10, record: 'sampled', meter: new RateMeter(10, () => now) });
    const { kept, processor } = sink();
    const tail = new TailSamplingProcessor(processor, { slowMs: 1000 });
    let recorded = 0;
    // 20 s at 1000 requests/s.
    for (let ms = 0; ms < 20_000; ms++) {
      now = ms;
      const id = traceId();
      const result = sampler.shouldSample(ROOT_CONTEXT, id, 'GET', SpanKind.SERVER, { 'url.path': '/api/history/v2' });
      if (result.decision === SamplingDecision.NOT_RECORD) continue;
      recorded++;
      tail.onEnd(rootSpan(id, result.traceState!.serialize()));
    }
    expect(recorded).toBeGreaterThan(150);
    expect(recorded).toBeLessThan(320);
    // The head kept what the tail keeps: nothing recorded is dropped at its end.
    expect(kept).toHaveLength(recorded);
    expect(tail.stats.dropped).toBe(0);
    const debug = new DebugRequestPropagator().extract(ROOT_CONTEXT, { 'x-service-debug-secret': 'x' }, defaultTextMapGetter);
    const asked = Array.from({ length: 50 }, () =>
      sampler.shouldSample(debug, traceId(), 'GET', SpanKind.SERVER, { 'url.path': '/api/history/v2' }),
    );
    expect(asked.every((r) => r.decision === SamplingDecision.RECORD_AND_SAMPLED)).toBe(true);
  });
});
