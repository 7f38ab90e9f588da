import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitUntil } from '@udp/testing';

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
let child: ChildProcess | undefined;
let logs = '';

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
  child?.kill('SIGTERM');
  collector.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(distDir, { recursive: true, force: true });
});

it('exports the spans of a call and logs it with its request id and trace id', async () => {
  const address = collector.address();
  const endpoint = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  child = spawn(process.execPath, [join(distDir, 'embedded', 'main.js')], {
    env: { ...embeddedEnv, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (logs += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  await waitUntil(() => /gateway on http:\/\/localhost:\d+/.test(stderr), 30_000, 'embedded start');
  const base = `http://127.0.0.1:${/gateway on http:\/\/localhost:(\d+)/.exec(stderr)![1]}`;
  const token = execFileSync(process.execPath, [join(distDir, '..', '..', 'tools', 'token.mjs'), 'tess'], { env: { ...process.env, DATA_DIR: dataDir } }).toString().trim();

  const res = await fetch(`${base}/api/history/v2?limit=5`, { headers: { authorization: `Bearer ${token}`, 'x-request-id': 'trace-test-1' } });
  expect(res.status).toBe(200);

  await waitUntil(() => exports.some((e) => e.includes('/api/history/v2')), 20_000, 'spans at the collector');
  const line = logs.split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((l) => l.request_id === 'trace-test-1' && l.message === 'request');
  expect(line).toMatchObject({ method: 'GET', path: '/api/history/v2', status: 200 });
  expect(line.trace_id).toMatch(/^[0-9a-f]{32}$/);
  expect(exports.join('\n')).toContain(line.trace_id);
  expect(exports.join('\n')).not.toContain('limit=5');
}, 60_000);
