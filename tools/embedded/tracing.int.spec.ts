import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type StartedProcess, startProcess, waitUntil } from '@udp/test-kit';

/**
 * Tracing through the real entry point: the embedded bundle with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a
 * local stand-in collector. A request through the gateway must arrive there as spans over OTLP/http, and the
 * request's log line must carry the request id and the same trace id.
 */
const root = join(__dirname, '..', '..');
const dataDir = mkdtempSync(join(tmpdir(), 'udp-tracing-'));
const distDir = join(root, 'tmp', `tracing-${process.pid}`);
const { EVENTSTORE_URL: _es, MONGO_URL: _mongo, KAFKA_BROKERS: _kafka, ...embeddedEnv } = process.env;
const exports: string[] = [];
let collector: Server;
let system: StartedProcess | undefined;

beforeAll(async () => {
  execFileSync(process.execPath, [join(root, 'tools', 'build.mjs'), '--outdir', distDir, 'embedded'], { stdio: 'inherit' });
  collector = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') exports.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
}, 60_000);
afterAll(async () => {
  await system?.stop();
  collector.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(distDir, { recursive: true, force: true });
});

it('exports the spans of a call and logs it with its request id and trace id', async () => {
  const address = collector.address();
  const endpoint = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  system = await startProcess(
    join(distDir, 'embedded', 'main.js'),
    {
      ...embeddedEnv,
      DATA_DIR: dataDir,
      // Both families: a call from ::1 comes from the trusted caller, one from 127.0.0.1 from anyone.
      PORT: '0',
      HOST: '::',
      TRACE_TRUSTED_CALLERS: '::1',
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      LOG_LEVEL: 'info',
    },
    { stream: 'stderr', pattern: /gateway on http:\/\/localhost:(\d+)/ },
  );
  const base = `http://127.0.0.1:${system.ready[1]}`;
  const trustedBase = `http://[::1]:${system.ready[1]}`;
  const token = execFileSync(process.execPath, [join(distDir, '..', '..', 'tools', 'token.mjs'), 'tess'], {
    env: { ...process.env, DATA_DIR: dataDir },
  })
    .toString()
    .trim();

  // Issue 18: a sampled traceparent from the trusted caller to the opted-out codops records nothing.
  const optedOut = '6df92f3577b34da6a3ce929d0e0e4738';
  const off = await fetch(`${trustedBase}/api/v1/zzoff/trending?u=0b6f4d0c-8c77-4a3b-9a7e-2f1c0f6b6a10`, {
    headers: { traceparent: `00-${optedOut}-00f067aa0ba902b7-01` },
  });
  expect(off.status).toBe(200);
  // Any caller's sampled traceparent: not continued at the edge, only a link of the gateway's server span.
  const caller = '7ef92f3577b34da6a3ce929d0e0e4739';
  const res = await fetch(`${base}/api/history/v2?limit=5`, {
    headers: { authorization: `Bearer ${token}`, 'x-request-id': 'trace-test-1', traceparent: `00-${caller}-00f067aa0ba902b7-01` },
  });
  expect(res.status).toBe(200);

  await waitUntil(() => exports.some((e) => e.includes('/api/history/v2')), 20_000, 'spans at the collector');
  // Nothing of the opted-out call reached the collector (its exports came before this call's, or with them).
  expect(exports.join('\n')).not.toContain('zzoff');
  expect(exports.join('\n')).not.toContain(optedOut);
  const line = system
    .output('stdout')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .find((l) => l.request_id === 'trace-test-1' && l.message === 'request');
  expect(line).toMatchObject({ method: 'GET', path: '/api/history/v2', status: 200 });
  expect(line.trace_id).toMatch(/^[0-9a-f]{32}$/);
  expect(line.trace_id).not.toBe(caller);
  expect(exports.join('\n')).toContain(line.trace_id);
  expect(exports.join('\n')).not.toContain('limit=5');
  const spans = exportedSpans();
  expect(spans.filter((s) => s.traceId === caller)).toEqual([]);
  const linked = spans.filter((s) => (s.links ?? []).some((l) => l.traceId === caller));
  expect(linked).toHaveLength(1);
  expect(linked[0].traceId).toBe(line.trace_id);
  expect(linked[0].parentSpanId ?? '').toBe('');
}, 60_000);

interface ExportedSpan {
  traceId: string;
  parentSpanId?: string;
  name: string;
  links?: Array<{ traceId: string }>;
}
/** Every span the stand-in collector received (OTLP/JSON, ids in hex). */
function exportedSpans(): ExportedSpan[] {
  const spans: ExportedSpan[] = [];
  for (const body of exports)
    for (const rs of JSON.parse(body).resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
  return spans;
}

it('without a collector, gives every request a new trace id in its log lines, never the traceparent of its caller', async () => {
  const plainDir = mkdtempSync(join(tmpdir(), 'udp-tracing-plain-'));
  const plain = await startProcess(
    join(distDir, 'embedded', 'main.js'),
    { ...embeddedEnv, DATA_DIR: plainDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    { stream: 'stderr', pattern: /gateway on http:\/\/localhost:(\d+)/ },
  );
  try {
    const base = `http://127.0.0.1:${plain.ready[1]}`;
    const token = execFileSync(process.execPath, [join(root, 'tools', 'token.mjs'), 'tom'], { env: { ...process.env, DATA_DIR: plainDir } })
      .toString()
      .trim();
    const caller = '0af7651916cd43dd8448eb211c80319c';
    const call = (requestId: string, init: RequestInit = {}, headers: Record<string, string> = {}) =>
      fetch(`${base}/api/history/v2`, { ...init, headers: { authorization: `Bearer ${token}`, 'x-request-id': requestId, ...headers } });
    // A write, a read with a caller's traceparent (not sampled), and a read without one: none of them recorded.
    const posted = await call(
      'plain-post',
      { method: 'POST', body: JSON.stringify({ item_id: 'urn:a' }) },
      { 'content-type': 'application/json' },
    );
    expect(posted.status).toBe(200);
    expect((await call('plain-traced', {}, { traceparent: `00-${caller}-b7ad6b7169203331-00` })).status).toBe(200);
    expect((await call('plain-read')).status).toBe(200);

    const linesOf = (requestId: string) =>
      plain
        .output('stdout')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .filter((l) => l.request_id === requestId && l.message === 'request');
    await waitUntil(() => linesOf('plain-read').length === 1, 10_000, 'the access line of the request');
    for (const requestId of ['plain-post', 'plain-traced', 'plain-read']) {
      const lines = linesOf(requestId);
      // One request context in the embedded mode: one line, the gateway's, naming the service it handed the request
      // to, in the request's trace.
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ service: 'gateway', upstream: 'history-svc' });
      expect(lines[0].trace_id).toMatch(/^[0-9a-f]{32}$/);
    }
    // The public edge starts a new trace (issue 18): the caller's trace id is not continued.
    expect(linesOf('plain-traced')[0].trace_id).not.toBe(caller);
    expect(linesOf('plain-read')[0].trace_id).not.toBe(caller);
  } finally {
    await plain.stop();
    rmSync(plainDir, { recursive: true, force: true });
  }
}, 60_000);
