import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, type Span, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { fileSecret, signDevToken } from '@udp/auth';
import { startTracing, stopTracing } from '@udp/telemetry';
import type { start as startSystem } from './host';

/**
 * What a request costs in spans, through the embedded system's real entry point (the gateway's HTTP server, the
 * service handed the request in process), with tracing as it runs without a collector: a request whose trace is
 * not recorded starts no span at all, recording or not (no server span, no in-process hop span, no store spans);
 * a recorded one (a call asking for its debug block) exports its spans as one tree under the gateway's server span.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'udp-request-tracing-'));
const exporter = new InMemorySpanExporter();
/** Every span the SDK starts that records (a processor's onStart sees them all). */
const recordingStarted: Span[] = [];
let system: Awaited<ReturnType<typeof startSystem>>;
let base = '';
let authorization = '';

beforeAll(async () => {
  // Before the system is loaded: the first start of tracing in a process wins (the apps' own start then keeps this
  // one), and the HTTP client instrumentation patches `http` only when it is loaded after it.
  startTracing({
    serviceName: 'request-tracing-test',
    record: 'debug',
    extraProcessors: [
      {
        onStart: (span: Span) => void recordingStarted.push(span),
        onEnd: () => undefined,
        forceFlush: async () => undefined,
        shutdown: async () => undefined,
      },
      new SimpleSpanProcessor(exporter),
    ],
  });
  const { start } = require('./host') as typeof import('./host');
  system = await start({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' }, { announce: false });
  base = `http://127.0.0.1:${system.port}`;
  authorization = `Bearer ${await signDevToken(fileSecret(dataDir, 'jwt-signing'), 'traced-user')}`;
  const posted = await fetch(`${base}/api/history/v2`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ item_id: 'urn:traced:1' }),
  });
  expect(posted.status).toBe(200);
}, 60_000);
afterAll(async () => {
  await system?.stop();
  await stopTracing();
  rmSync(dataDir, { recursive: true, force: true });
});
beforeEach(() => {
  exporter.reset();
  recordingStarted.length = 0;
});

it('starts no span, recording or not, for a request whose trace is not recorded', async () => {
  // Spans that record nothing never reach a processor: the SDK makes each by wrapping a span context. (The test's
  // own `fetch`, outside any trace, wraps the invalid context: the instrumentation's constant "no span".)
  const wrapped = jest.spyOn(trace, 'wrapSpanContext');
  try {
    const read = await fetch(`${base}/api/history/v2?limit=100`, { headers: { authorization } });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { data: unknown[] }).data).toHaveLength(1);
    const written = await fetch(`${base}/api/history/v2`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ item_id: 'urn:traced:2' }),
    });
    expect(written.status).toBe(200);
    expect(recordingStarted).toEqual([]);
    expect(wrapped.mock.calls.filter(([spanContext]) => trace.isSpanContextValid(spanContext))).toEqual([]);
  } finally {
    wrapped.mockRestore();
  }
});

it('exports the spans of a recorded request as one tree under the gateway server span', async () => {
  // A call asking for its debug block is recorded wherever it goes (the header's presence marks it).
  const read = await fetch(`${base}/api/history/v2?limit=100`, { headers: { authorization, 'x-service-debug-secret': 'any' } });
  expect(read.status).toBe(200);
  await read.arrayBuffer();
  const spans = exporter.getFinishedSpans();
  const roots = spans.filter((s) => !s.parentSpanContext);
  expect(roots).toHaveLength(1);
  const [gateway] = roots;
  expect(gateway).toMatchObject({ name: 'GET /api/history/v2', kind: SpanKind.SERVER });
  expect(gateway.attributes).toMatchObject({ 'http.route': '/api/history/v2', 'http.response.status_code': 200 });
  const traceId = gateway.spanContext().traceId;
  const service = spans.find((s) => s.kind === SpanKind.SERVER && s !== gateway);
  expect(service).toBeDefined();
  expect(service!.attributes).toMatchObject({ 'udp.dispatch': 'in-process', 'http.route': '/api/history/v2' });
  expect(service!.parentSpanContext?.spanId).toBe(gateway.spanContext().spanId);
  // The store's spans under the service's span, every span in the gateway's trace.
  const reads = spans.filter((s) => s.kind === SpanKind.CLIENT);
  expect(reads.length).toBeGreaterThan(0);
  for (const span of reads) expect(span.parentSpanContext?.spanId).toBe(service!.spanContext().spanId);
  for (const span of spans) expect(span.spanContext().traceId).toBe(traceId);
  // Each span was started once, each recorded.
  expect(recordingStarted.map((s) => s.spanContext().spanId).sort()).toEqual(spans.map((s) => s.spanContext().spanId).sort());
});
