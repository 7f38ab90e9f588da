import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reportSkipped, waitUntil } from '@udp/test-kit';
import { type AppProcess, appProcesses } from './app-processes';
import { tracedEnv } from './embedded-process';
import { resourceValue, spansInCollectorFile } from './testing/collector-file';

/**
 * One trace per export (issue 21), through the real collector (tools/servers/with-otelcol.sh; CI runs it): the
 * gateway, the four services and the export-worker as separate processes. The export's request (gateway, then
 * export-worker), its build (the export-worker's consumer of `userdata.export.requested`, joined through the event's
 * trace context and the bus message's headers), the export-worker's `fetch` calls to history, playlist, preference
 * and profile (their server spans), and the callback (the export-worker's client span, and the `traceparent` the
 * receiver gets) all carry the request's trace id.
 */
const collector = process.env.OTELCOL_OTLP_ENDPOINT;
const tracesFile = process.env.OTELCOL_TRACES_FILE;
const SERVICES = ['history-svc', 'playlist-svc', 'preference-svc', 'profile-svc'] as const;

interface ExportedSpan {
  name: string;
  kind: number; // OTLP: 1 internal, 2 server, 3 client, 4 producer, 5 consumer
  parent: string;
  service: string;
  attributes: string;
}
/** The spans of one trace in the collector's file exporter output (OTLP JSON lines), by span id. */
function exportedSpans(traceId: string): Map<string, ExportedSpan> {
  const found = new Map<string, ExportedSpan>();
  for (const span of spansInCollectorFile(tracesFile)) {
    if (span.traceId !== traceId) continue;
    found.set(span.spanId, {
      name: span.name,
      kind: span.kind,
      parent: span.parentSpanId ?? '',
      service: resourceValue(span, 'service.name'),
      attributes: JSON.stringify(span.attributes ?? []),
    });
  }
  return found;
}

if (!collector || !tracesFile) {
  reportSkipped('one trace per export', 'OTELCOL_OTLP_ENDPOINT unset: run under tools/servers/with-otelcol.sh (CI does)');
} else {
  const dataDir = mkdtempSync(join(tmpdir(), 'udp-export-tracing-'));
  const apps = appProcesses('export-tracing', ['gateway', 'export-worker', ...SERVICES]);
  const callbacks: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  let receiver: Server;
  let gateway: AppProcess;

  const env = (extra: Record<string, string>) => tracedEnv(dataDir, extra);

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        callbacks.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    apps.build();
    const urls: Record<string, string> = {};
    for (const app of SERVICES) urls[`${app.replace('-svc', '').toUpperCase()}_SVC_URL`] = (await apps.start(app, env({}))).url;
    const worker = await apps.start(
      'export-worker',
      env({ ...urls, EXPORT_CALLBACK_HOSTS: `http://127.0.0.1:${(receiver.address() as { port: number }).port}` }),
    );
    gateway = await apps.start('gateway', env({ ...urls, EXPORT_WORKER_URL: worker.url }));
  }, 120_000);
  afterAll(async () => {
    await apps.stopAll();
    await new Promise((resolve) => receiver?.close(resolve));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("shares the export request's trace id with its build, its calls to the four services and its callback", async () => {
    const token = apps.tool('token', 'tess', { ...process.env, DATA_DIR: dataDir });
    const res = await fetch(`${gateway.url}/api/data/export`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-request-id': 'export-trace-1' },
      body: JSON.stringify({
        fileName: 'traced',
        callbackUrl: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/ready?token=secret`,
      }),
    });
    expect(res.status).toBe(201);
    await waitUntil(() => callbacks.length > 0, 30_000, 'the export callback');

    // The request's trace: the id on the gateway's log line of the call.
    const line = gateway.process
      .output('stdout')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.request_id === 'export-trace-1' && l.message === 'request')!;
    const traceId = line.trace_id as string;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);

    // The callback carried the trace on (W3C traceparent: 00-<trace id>-<span id>-<flags>).
    expect(callbacks[0].headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-0[01]$`));

    const serverOf = (service: string) => (spans: Map<string, ExportedSpan>) =>
      [...spans.values()].find((s) => s.service === service && s.kind === 2);
    const complete = (spans: Map<string, ExportedSpan>) =>
      SERVICES.every((s) => serverOf(s)(spans)) &&
      [...spans.values()].some((s) => s.service === 'export-worker' && s.kind === 3 && s.name.startsWith('POST'));
    let spans = new Map<string, ExportedSpan>();
    await waitUntil(() => complete((spans = exportedSpans(traceId))), 30_000, 'the whole export in one trace at the collector').catch(
      (error: Error) => {
        const seen = [...spans.values()].map((s) => `${s.service} ${s.kind} ${s.name}`);
        throw new Error(`${error.message}; spans of ${traceId}:\n${seen.join('\n')}`);
      },
    );

    // The request: the gateway's server span is the root; the export-worker's server span answers the POST.
    const all = [...spans.values()];
    expect(all.filter((s) => s.parent === '')).toEqual([expect.objectContaining({ service: 'gateway', kind: 2 })]);
    expect(all.some((s) => s.service === 'export-worker' && s.kind === 2 && s.name.startsWith('POST'))).toBe(true);
    // The build: the consumer of the export request, under the publication of the ExportRequested event.
    const build = all.find((s) => s.service === 'export-worker' && s.kind === 5 && s.name === 'process userdata.export.requested');
    expect(build).toBeDefined();
    expect(spans.get(build!.parent)).toMatchObject({ kind: 4, name: 'send userdata.export.requested' });
    // Its calls to the four services: each service's server span under a client span (fetch) of the export-worker.
    for (const service of SERVICES) {
      const server = serverOf(service)(spans)!;
      expect(spans.get(server.parent)).toMatchObject({ service: 'export-worker', kind: 3 });
    }
    // The callback's client span, without the callback URL's query string.
    const callback = all.find((s) => s.service === 'export-worker' && s.kind === 3 && s.name.startsWith('POST'))!;
    expect(callback.attributes).not.toContain('token=secret');
    expect(JSON.stringify(all)).not.toContain('limit=1000');
  }, 90_000);
}
