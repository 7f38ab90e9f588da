import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DebugSpan } from '@udp/telemetry';
import { type StartedProcess, waitUntil } from '@udp/test-kit';
import { appProcesses } from './app-processes';
import { tracedEnv } from './embedded-process';
import { resourceValue, spansInCollectorFile } from './testing/collector-file';

/**
 * One trace across processes (distributed mode: the gateway and history-svc as separate processes, HTTP between
 * them, W3C trace context on the hop): the debug block holds the spans of both, handed back by the service. With a
 * real OpenTelemetry Collector (tools/servers/with-otelcol.sh sets OTELCOL_*; CI runs it), the same trace must
 * arrive complete in the collector's file exporter, redacted, and the gateway's request metric must count the calls
 * per endpoint and component in Prometheus format.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'udp-distributed-tracing-'));
const apps = appProcesses('distributed-tracing', ['gateway', 'history-svc', 'playlist-svc']);
const collector = process.env.OTELCOL_OTLP_ENDPOINT;
/** With Kafka (CI: with-servers.sh), history-svc publishes its change messages there, inside the writing request's trace. */
const kafka = process.env.KAFKA_BROKERS;
const started: StartedProcess[] = [];
let gateway = '';
const u = '0b6f4d0c-8c77-4a3b-9a7e-2f1c0f6b6a10';

const env = (extra: Record<string, string>) => tracedEnv(dataDir, { OTEL_METRIC_EXPORT_INTERVAL: '500', ...extra });
beforeAll(async () => {
  if (!collector)
    process.stderr.write(
      'distributed-tracing: OTELCOL_OTLP_ENDPOINT unset, the collector assertions are skipped (run under tools/servers/with-otelcol.sh)\n',
    );
  apps.build();
  const history = await apps.start('history-svc', env(kafka ? { KAFKA_BROKERS: kafka } : {}));
  const playlist = await apps.start('playlist-svc', env({}));
  const gw = await apps.start('gateway', env({ HISTORY_SVC_URL: history.url, PLAYLIST_SVC_URL: playlist.url }));
  started.push(history.process, playlist.process, gw.process);
  gateway = gw.url;
}, 90_000);
afterAll(async () => {
  await apps.stopAll();
  rmSync(dataDir, { recursive: true, force: true });
});

const tool = (name: string, arg: string) => apps.tool(name, arg, { ...process.env, DATA_DIR: dataDir });

it('traces one call across the gateway and history-svc processes, complete in the debug block and in the collector', async () => {
  const auth = { authorization: `Bearer ${tool('token', 'tess')}` };
  const posted = await fetch(`${gateway}/api/history/v2`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', 'x-request-id': 'write-1' },
    body: JSON.stringify({ item_id: 'urn:one', last_playback_position: 9 }),
  });
  expect(posted.status).toBe(200);

  // A call of the codops opted out of tracing: an empty span list, and nothing exported (checked below).
  const off = await fetch(`${gateway}/api/v1/zzoff/trending?u=${u}`, {
    headers: { 'x-service-debug-secret': tool('codops-secret', 'zzoff') },
  });
  expect(((await off.json()) as { debug_spans: { spans: unknown[] } }).debug_spans.spans).toEqual([]);

  const res = await fetch(`${gateway}/api/v1/zzebu/continue_watching?u=${u}&component=continue-watching&size=3`, {
    headers: { ...auth, 'x-service-debug-secret': tool('codops-secret', 'zzebu'), 'x-request-id': 'distributed-1' },
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { result: { items: unknown[] }; debug_spans: { trace_id: string; spans: DebugSpan[] } };
  expect(body.result.items).toEqual([expect.objectContaining({ item_id: 'urn:one' })]);
  const { trace_id: traceId, spans } = body.debug_spans;
  const ids = new Set(spans.map((s) => s.span_id));
  expect(spans.filter((s) => s.parent_id === null)).toHaveLength(1);
  for (const s of spans) if (s.parent_id) expect(ids.has(s.parent_id)).toBe(true);
  expect(spans[spans.length - 1]).toMatchObject({ name: 'continue_watching', kind: 'SpanKind.SERVER' });
  // history-svc's spans, handed back over HTTP: its server span and its read-model query.
  const server = spans.find((s) => s.kind === 'SpanKind.SERVER' && s.name.startsWith('GET /api/history/v2'))!;
  expect(server).toBeDefined();
  expect(spans.find((s) => s.span_id === server.parent_id)!.kind).toBe('SpanKind.CLIENT');
  expect(spans.some((s) => s.kind === 'SpanKind.CLIENT' && s.name === 'find history_entries')).toBe(true);

  if (!collector) return;
  // More calls of the same endpoint and component, for the metrics.
  for (let i = 0; i < 4; i++) {
    const r = await fetch(`${gateway}/api/v1/zzebu/continue_watching?u=${u}&component=continue-watching`, { headers: auth });
    expect(r.status).toBe(200);
  }
  const file = process.env.OTELCOL_TRACES_FILE!;
  const exported = (wanted = traceId) => {
    const found = new Map<string, { name: string; parent: string; service: string; attributes: string; kind: number }>();
    for (const span of spansInCollectorFile(file)) {
      if (span.traceId !== wanted) continue;
      found.set(span.spanId, {
        name: span.name,
        parent: span.parentSpanId ?? '',
        service: resourceValue(span, 'service.name'),
        attributes: JSON.stringify(span.attributes ?? []),
        kind: span.kind,
      });
    }
    return found;
  };
  // Every span of the debug block arrives at the collector, from both processes, with the same parents.
  await waitUntil(() => [...ids].every((id) => exported().has(id)), 30_000, 'the whole trace in the collector file');
  const stored = exported();
  expect(readFileSync(file, 'utf8')).not.toContain('zzoff');
  expect(new Set([...stored.values()].map((s) => s.service))).toEqual(new Set(['gateway', 'history-svc']));
  for (const s of spans) expect(stored.get(s.span_id)!.parent).toBe(s.parent_id ?? '');
  const storedText = [...stored.values()].map((s) => s.attributes).join('\n');
  expect(storedText).not.toMatch(/size=3|limit=|db\.statement|db\.query\.text/);
  expect(storedText).toContain('distributed-1');

  // RED metrics the gateway records for every call (not from spans), in Prometheus format: 5 calls of this
  // endpoint and component, with their codops.
  const calls = async () => {
    const text = await (await fetch(process.env.OTELCOL_METRICS_URL!)).text();
    return text
      .split('\n')
      .filter(
        (l) =>
          l.startsWith('http_server_request_duration_seconds_count{') &&
          l.includes('udp_service="gateway"') &&
          l.includes('service_endpoint="continue_watching"') &&
          l.includes('service_component="continue-watching"'),
      )
      .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
  };
  let seen = 0;
  await waitUntil(async () => (seen = await calls()) >= 5, 30_000, 'the request metric counting the calls').catch(async (error: Error) => {
    const lines = (await (await fetch(process.env.OTELCOL_METRICS_URL!)).text())
      .split('\n')
      .filter((l) => l.startsWith('http_server_request_duration_seconds_count'));
    throw new Error(`${error.message}; count lines:\n${lines.slice(0, 20).join('\n')}`);
  });
  expect(seen).toBe(5);
  const text = await (await fetch(process.env.OTELCOL_METRICS_URL!)).text();
  expect(text).toMatch(/http_server_request_duration_seconds_bucket\{[^}]*service_endpoint="continue_watching"/);

  if (!kafka) {
    process.stderr.write('distributed-tracing: KAFKA_BROKERS unset, the Kafka part is skipped\n');
    return;
  }
  // The write's trace (its id is on the gateway's log line) goes on through the event's metadata to the Kafka
  // publication of the history change: a PRODUCER span of history-svc in the same trace, W3C context in the headers.
  const line = started[started.length - 1]
    .output('stdout')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.request_id === 'write-1' && l.message === 'request')!;
  const writeTrace = line.trace_id as string;
  expect(writeTrace).toMatch(/^[0-9a-f]{32}$/);
  await waitUntil(
    () => [...exported(writeTrace).values()].some((s) => s.service === 'history-svc' && s.name === 'send user-data.history.v1'),
    30_000,
    "the Kafka send in the write's trace",
  );
  const write = exported(writeTrace);
  const send = [...write.values()].find((s) => s.name === 'send user-data.history.v1')!;
  expect(send.kind).toBe(4); // SPAN_KIND_PRODUCER
  expect(send.attributes).not.toContain('messaging.kafka.message.key');
  expect([...write.values()].some((s) => s.service === 'gateway' && s.parent === '')).toBe(true);
}, 120_000);
