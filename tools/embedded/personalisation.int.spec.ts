import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DebugSpan } from '@udp/telemetry';
import { type StartedProcess, startProcess } from '@udp/test-kit';

/**
 * `/api/v1/{codops}/{endpoint}` and its debug block through the real entry point: the embedded bundle as
 * `npm start` runs it (tracing on, no collector), the demo codops `zzebu`, its secret from `codops-secret`.
 */
const root = join(__dirname, '..', '..');
const dataDir = mkdtempSync(join(tmpdir(), 'udp-personalisation-'));
const distDir = join(root, 'tmp', `personalisation-${process.pid}`);
const { EVENTSTORE_URL: _es, MONGO_URL: _mongo, KAFKA_BROKERS: _kafka, ...embeddedEnv } = process.env;
let system: StartedProcess | undefined;
let base = '';
let secret = '';
const u = '0b6f4d0c-8c77-4a3b-9a7e-2f1c0f6b6a10';
interface Answer {
  status: string;
  result: { component: string; fallback_used: boolean; items: Array<Record<string, unknown>> };
  debug: { chosen: string; component: string; selection: string; fallback: Record<string, unknown> };
  debug_spans: { trace_id: string; spans: DebugSpan[] };
}
const json = async (res: Response) => (await res.json()) as Answer;
const token = (user: string) =>
  execFileSync(process.execPath, [join(distDir, 'apps', 'gateway', 'token.js'), user], { env: { ...process.env, DATA_DIR: dataDir } })
    .toString()
    .trim();

beforeAll(async () => {
  execFileSync(process.execPath, [join(root, 'tools', 'build.mjs'), '--outdir', distDir, 'embedded', 'gateway'], { stdio: 'inherit' });
  system = await startProcess(
    join(distDir, 'embedded', 'main.js'),
    { ...embeddedEnv, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', TRENDING_MIN_USERS: '2' },
    { stream: 'stderr', pattern: /gateway on http:\/\/localhost:(\d+)/ },
  );
  base = `http://127.0.0.1:${system.ready[1]}`;
  secret = execFileSync(process.execPath, [join(distDir, 'apps', 'gateway', 'codops-secret.js'), 'zzebu'], {
    env: { ...process.env, DATA_DIR: dataDir },
  })
    .toString()
    .trim();
}, 90_000);
afterAll(async () => {
  await system?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(distDir, { recursive: true, force: true });
});

const watch = (user: string, item: string, position?: number) =>
  fetch(`${base}/api/history/v2`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token(user)}`, 'content-type': 'application/json' },
    body: JSON.stringify({ item_id: item, ...(position !== undefined && { last_playback_position: position }) }),
  }).then((r) => expect(r.status).toBe(200));

it("serves continue-watching from the caller's own history, and trending only past TRENDING_MIN_USERS users", async () => {
  await watch('tess', 'urn:one', 42);
  await watch('tess', 'urn:two');
  const cw = await fetch(`${base}/api/v1/zzebu/continue_watching?u=${u}&component=continue-watching&size=10`, {
    headers: { authorization: `Bearer ${token('tess')}` },
  });
  expect(cw.status).toBe(200);
  // The envelope is the router's (its API spec); what this process adds is the history behind the items.
  const answer = await json(cw);
  expect(answer.status).toBe('ok');
  expect(answer.result.items).toEqual([expect.objectContaining({ item_id: 'urn:one', last_playback_position: 42 })]);
  // Another user sees nothing of tess's.
  const other = await json(
    await fetch(`${base}/api/v1/zzebu/continue_watching?u=${u}&component=recently-watched`, {
      headers: { authorization: `Bearer ${token('max')}` },
    }),
  );
  expect(other.result.items).toEqual([]);

  const trending = async () => (await json(await fetch(`${base}/api/v1/zzebu/trending?u=${u}`))).result.items;
  expect(await trending()).toEqual([]); // one user only: below the threshold
  await watch('max', 'urn:one');
  expect(await trending()).toEqual([expect.objectContaining({ item_id: 'urn:one', users: 2 })]);
}, 60_000);

it('returns the whole span tree of a debug call, ordered by end, the gateway span last, redacted', async () => {
  const res = await fetch(`${base}/api/v1/zzebu/continue_watching?u=${u}&size=7`, {
    headers: { authorization: `Bearer ${token('tess')}`, 'x-service-debug-secret': secret, 'x-request-id': 'debug-call-1' },
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('x-udp-debug-spans')).toBeNull();
  const body = await json(res);
  expect(body.debug).toMatchObject({ request_id: 'debug-call-1', selection: 'ab', fallback: { used: false } });
  const { trace_id: traceId, spans } = body.debug_spans;
  expect(traceId).toMatch(/^[0-9a-f]{32}$/);
  const ids = new Set(spans.map((s) => s.span_id));
  const roots = spans.filter((s) => s.parent_id === null);
  expect(roots).toHaveLength(1); // one root
  for (const span of spans) {
    expect(span.trace_id).toBe(traceId);
    if (span.parent_id !== null) expect(ids.has(span.parent_id)).toBe(true); // no orphan
    expect(span.kind).toMatch(/^SpanKind\.(INTERNAL|SERVER|CLIENT|PRODUCER|CONSUMER)$/);
  }
  const ends = spans.map((s) => s.start_ms + s.duration_ms);
  expect([...ends].sort((a, b) => a - b)).toEqual(ends);
  const gateway = spans[spans.length - 1];
  expect(gateway).toMatchObject({ name: 'continue_watching', parent_id: null, kind: 'SpanKind.SERVER' });
  expect(gateway.attributes).toMatchObject({
    'service.codops': 'zzebu',
    'service.endpoint': 'continue_watching',
    'service.component': body.result.component,
    'service.component.chosen': body.debug.chosen,
    'service.component.selection': 'ab',
    'service.fallback.used': false,
    'service.request_id': 'debug-call-1',
  });
  const component = spans.find((s) => s.name === `continue_watching/${body.result.component}`)!;
  expect(component.parent_id).toBe(gateway.span_id);
  // The service's own server span, handed back, under the gateway's HTTP client span.
  const server = spans.find((s) => s.kind === 'SpanKind.SERVER' && s.name.startsWith('GET /api/history'))!;
  expect(server).toBeDefined();
  const client = spans.find((s) => s.span_id === server.parent_id)!;
  expect(client.kind).toBe('SpanKind.CLIENT');
  const text = JSON.stringify(spans);
  expect(text).not.toMatch(/size=7|limit=|\?/);
  expect(text).not.toContain(secret);
}, 30_000);

it('answers stream=true as NDJSON without a block, and a wrong secret without one', async () => {
  const streamed = await fetch(`${base}/api/v1/zzebu/trending?u=${u}&stream=true`, { headers: { 'x-service-debug-secret': secret } });
  expect(streamed.headers.get('content-type')).toContain('application/x-ndjson');
  const lines = (await streamed.text())
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(lines[0]).toMatchObject({ status: 'ok', codops: 'zzebu', endpoint: 'trending', component: 'trending' });
  expect(JSON.stringify(lines)).not.toContain('debug');
  const wrong = await json(await fetch(`${base}/api/v1/zzebu/trending?u=${u}`, { headers: { 'x-service-debug-secret': 'wrong' } }));
  expect(Object.keys(wrong).sort()).toEqual(['codops', 'endpoint', 'result', 'status']);
}, 30_000);

it('gives an opted-out codops an empty span list', async () => {
  const offSecret = execFileSync(process.execPath, [join(distDir, 'apps', 'gateway', 'codops-secret.js'), 'zzoff'], {
    env: { ...process.env, DATA_DIR: dataDir },
  })
    .toString()
    .trim();
  const body = await json(await fetch(`${base}/api/v1/zzoff/trending?u=${u}`, { headers: { 'x-service-debug-secret': offSecret } }));
  expect(body.result.component).toBe('trending');
  expect(body.debug_spans.spans).toEqual([]);
}, 30_000);

describe('given a client that chooses its trace id (issue 18)', () => {
  const chosen = '4bf92f3577b34da6a3ce929d0e0e4736';
  const traceparent = `00-${chosen}-00f067aa0ba902b7-01`;

  it("when bob calls with traceparent T and alice asks for her debug block with the same T, then alice's block holds none of bob's spans", async () => {
    const bob = { authorization: `Bearer ${token('bob')}`, traceparent };
    await fetch(`${base}/api/preference/bobs-key-7f3a`, { headers: bob });
    await fetch(`${base}/api/data/export/public/bobs-export-key-91c2`, { headers: { traceparent } });

    const res = await fetch(`${base}/api/v1/zzebu/trending?u=${u}`, {
      headers: { authorization: `Bearer ${token('alice')}`, 'x-service-debug-secret': secret, traceparent },
    });
    expect(res.status).toBe(200);
    const { trace_id: traceId, spans } = (await json(res)).debug_spans;
    // The edge starts a new trace: the caller's trace id is not the call's.
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).not.toBe(chosen);
    expect(spans.length).toBeGreaterThan(0);
    for (const span of spans) expect(span.trace_id).toBe(traceId);
    expect(spans.filter((s) => s.parent_id === null)).toHaveLength(1);
    const text = JSON.stringify(spans);
    expect(text).not.toContain('bobs-key-7f3a');
    expect(text).not.toContain('bobs-export-key-91c2');
    expect(text).not.toContain('/api/preference');
  }, 30_000);

  it('when a sampled traceparent calls the opted-out codops, then nothing is recorded: an empty span list', async () => {
    const offSecret = execFileSync(process.execPath, [join(distDir, 'apps', 'gateway', 'codops-secret.js'), 'zzoff'], {
      env: { ...process.env, DATA_DIR: dataDir },
    })
      .toString()
      .trim();
    const body = await json(
      await fetch(`${base}/api/v1/zzoff/trending?u=${u}`, { headers: { 'x-service-debug-secret': offSecret, traceparent } }),
    );
    expect(body.debug_spans.spans).toEqual([]);
    expect(body.debug_spans.trace_id).not.toBe(chosen);
  }, 30_000);
});

describe('given a caller trusted with its trace context (TRACE_TRUSTED_CALLERS)', () => {
  const chosen = '5cf92f3577b34da6a3ce929d0e0e4737';
  const traceparent = `00-${chosen}-00f067aa0ba902b7-01`;
  const trustedDir = mkdtempSync(join(tmpdir(), 'udp-personalisation-trusted-'));
  let trusted: StartedProcess | undefined;
  let trustedBase = '';
  const cli = (name: string, arg: string) =>
    execFileSync(process.execPath, [join(distDir, 'apps', 'gateway', `${name}.js`), arg], { env: { ...process.env, DATA_DIR: trustedDir } })
      .toString()
      .trim();
  beforeAll(async () => {
    trusted = await startProcess(
      join(distDir, 'embedded', 'main.js'),
      { ...embeddedEnv, DATA_DIR: trustedDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', TRACE_TRUSTED_CALLERS: '127.0.0.1, ::1' },
      { stream: 'stderr', pattern: /gateway on http:\/\/localhost:(\d+)/ },
    );
    trustedBase = `http://127.0.0.1:${trusted.ready[1]}`;
  }, 60_000);
  afterAll(async () => {
    await trusted?.stop();
    rmSync(trustedDir, { recursive: true, force: true });
  });

  it("when bob and alice share its trace id, then the trace goes on, and alice's block still holds only her call's spans", async () => {
    await fetch(`${trustedBase}/api/preference/bobs-key-7f3a`, {
      headers: { authorization: `Bearer ${cli('token', 'bob')}`, traceparent },
    });
    await fetch(`${trustedBase}/api/data/export/public/bobs-export-key-91c2`, { headers: { traceparent } });
    const res = await fetch(`${trustedBase}/api/v1/zzebu/trending?u=${u}`, {
      headers: { 'x-service-debug-secret': cli('codops-secret', 'zzebu'), traceparent },
    });
    const { trace_id: traceId, spans } = (await json(res)).debug_spans;
    expect(traceId).toBe(chosen);
    expect(spans.map((s) => s.name)).toContain('trending');
    const text = JSON.stringify(spans);
    expect(text).not.toContain('bobs-key-7f3a');
    expect(text).not.toContain('bobs-export-key-91c2');
    // One tree: the gateway span (its parent the caller's span, not in the block) and what ran under it.
    const ids = new Set(spans.map((s) => s.span_id));
    expect(spans.filter((s) => !s.parent_id || !ids.has(s.parent_id))).toEqual([spans[spans.length - 1]]);
  }, 30_000);

  it('when it sends a sampled traceparent to the opted-out codops, then nothing is recorded', async () => {
    const body = await json(
      await fetch(`${trustedBase}/api/v1/zzoff/trending?u=${u}`, {
        headers: { 'x-service-debug-secret': cli('codops-secret', 'zzoff'), traceparent },
      }),
    );
    expect(body.debug_spans.spans).toEqual([]);
  }, 30_000);
});
