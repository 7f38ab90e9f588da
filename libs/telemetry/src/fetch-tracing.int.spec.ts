import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startTracing, stopTracing } from './tracing';

/**
 * Node's `fetch` (undici) under startTracing: inside a trace it makes a CLIENT span of that trace and sends its W3C
 * context, so the service it calls continues the trace (the export-worker's reads, libs/auth's userinfo calls);
 * outside any trace it makes no span. The query string stays out of the span (redaction.ts).
 */
const exporter = new InMemorySpanExporter();
let server: Server;
let base = '';
const received: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  startTracing({ serviceName: 'fetch-test', extraProcessors: [new SimpleSpanProcessor(exporter)] });
  server = createServer((req, res) => {
    received.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await stopTracing();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  exporter.reset();
  received.length = 0;
});

it('continues the current trace: a CLIENT span under the active span, traceparent sent', async () => {
  const tracer = trace.getTracer('test');
  const { traceId, spanId } = await tracer.startActiveSpan('build', async (span) => {
    await (await fetch(`${base}/api/history/v2?limit=1000&u=someone`)).json();
    span.end();
    return span.spanContext();
  });
  expect(received[0].traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  const client = exporter.getFinishedSpans().find((s) => s.kind === 2 /* CLIENT */)!;
  expect(client).toBeDefined();
  expect(client.spanContext().traceId).toBe(traceId);
  expect(client.parentSpanContext?.spanId).toBe(spanId);
  // The service's server span will be this span's child.
  expect(received[0].traceparent).toContain(client.spanContext().spanId);
  expect(JSON.stringify(client.attributes)).not.toContain('limit=1000');
});

it('makes no span and sends no trace context outside a trace', async () => {
  await (await fetch(`${base}/background`)).json();
  expect(received[0].traceparent).toBeUndefined();
  expect(exporter.getFinishedSpans()).toEqual([]);
});
