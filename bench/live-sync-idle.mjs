// Idle live-sync streams on one gateway process (issue 29): the embedded system built by tools/build.mjs, N streams of
// N users held open, the process's RSS and other requests' latency before and after.
//   node tools/build.mjs && node bench/live-sync-idle.mjs [N=10000] [seconds=10]
// The latency is GET /api/history/v2 of one user at a fixed offered rate (bench/load.mjs's open-loop generator), so a
// slower answer is not hidden by fewer requests. Run on loopback; this machine's other load is printed beside it.
import { fork, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { BENCH_RATE_LIMITS, client, openLoop, untilLive } from './load.mjs';

const N = Number(process.argv[2] ?? 10_000);
const SECONDS = Number(process.argv[3] ?? 10);
const RATE = 200;
const root = join(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
const { SignJWT } = require('jose');

const dataDir = mkdtempSync(join(tmpdir(), 'udp-live-sync-idle-'));
const port = 18000 + Math.floor(Math.random() * 1000);
// The inspector (loopback only) lets the bench force a full GC in the system before it reads memory: what the streams
// hold, not the garbage their opening left behind.
const inspectPort = port + 1000;
const child = spawn(process.execPath, ['--expose-gc', `--inspect=127.0.0.1:${inspectPort}`, join(root, 'dist', 'embedded', 'main.js')], {
  env: {
    ...process.env,
    ...BENCH_RATE_LIMITS,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    HTTP_MAX_CONNECTIONS: String(N + 1000),
    HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(N + 1000),
    CHANGES_MAX_STREAMS: String(N + 100),
  },
  stdio: ['ignore', 'ignore', 'pipe'],
});
child.stderr.on('data', () => {});
// A failing run must not leave the system running.
process.on('exit', () => child.kill('SIGKILL'));
const base = `http://127.0.0.1:${port}`;
await untilLive(base);
const secret = new TextEncoder().encode(readFileSync(join(dataDir, 'secrets', 'jwt-signing.key'), 'utf8').trim());
const token = (user) =>
  new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(user)
    .setIssuer('udp-embedded')
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(secret);

const rssMiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) / 1024;
/** A full GC in the system, then its memory (MiB): through the inspector's Runtime.evaluate. */
async function collectedMemory() {
  const [{ webSocketDebuggerUrl }] = await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json();
  const socket = new WebSocket(webSocketDebuggerUrl);
  await new Promise((r) => socket.addEventListener('open', r, { once: true }));
  const answer = new Promise((r) => socket.addEventListener('message', (m) => r(JSON.parse(m.data)), { once: true }));
  const expression = 'gc(); gc(); JSON.stringify(process.memoryUsage())';
  socket.send(JSON.stringify({ id: 1, method: 'Runtime.evaluate', params: { expression, includeCommandLineAPI: true } }));
  const usage = JSON.parse((await answer).result.result.value);
  socket.close();
  return { heap: usage.heapUsed / 2 ** 20, external: (usage.external + usage.arrayBuffers) / 2 ** 20 };
}
const reader = `Bearer ${await token('reader')}`;
const request = client(base, 16);
for (let i = 0; i < 100; i++) {
  await request(
    'POST',
    '/api/history/v2',
    { authorization: reader, 'content-type': 'application/json' },
    JSON.stringify({ item_id: `i${i}`, last_playback_position: i }),
  );
}
const p = (ms, q) => ms.sort((a, b) => a - b)[Math.min(ms.length - 1, Math.floor(q * ms.length))].toFixed(1);
async function measure(label) {
  // Both windows start from a collected heap: the latency of requests beside idle streams, not beside the collection of
  // what opening them left (the first window follows the seeding the same way).
  await collectedMemory();
  const run = await openLoop(() => request('GET', '/api/history/v2?limit=20', { authorization: reader }), RATE * SECONDS, RATE);
  const { heap, external } = await collectedMemory();
  const rss = rssMiB();
  console.log(
    `${label}: RSS ${rss.toFixed(0)} MiB (after a full GC: heap ${heap.toFixed(0)} MiB, external ${external.toFixed(0)} MiB); GET /api/history/v2 at ${RATE}/s: p50 ${p(run.latencies, 0.5)} ms, p99 ${p(run.latencies, 0.99)} ms; load ${loadavg()[0].toFixed(1)}`,
  );
  return { rss, heap, p99: Number(p(run.latencies, 0.99)) };
}

const before = await measure('no streams');
/** Opens `n` streams at `streamPort`, 200 at a time, each of its own user; resolves once each has its first event. */
async function openStreams(streamPort, n) {
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const opened = [];
  for (let i = 0; i < n; i += 200) {
    await Promise.all(
      Array.from({ length: Math.min(200, n - i) }, async (_, j) => {
        const authorization = `Bearer ${await token(`idle-${i + j}`)}`;
        await new Promise((resolve, reject) => {
          const req = http.get({ host: '127.0.0.1', port: streamPort, path: '/api/changes', headers: { authorization }, agent }, (res) => {
            if (res.statusCode !== 200) return reject(new Error(`stream ${i + j}: ${res.statusCode}`));
            res.once('data', resolve);
          });
          opened.push(req);
          req.on('error', reject);
        });
      }),
    );
  }
  return opened;
}

const streams = await openStreams(port, N);
const ready = streams.length;
console.log(`${ready} idle streams open`);
const after = await measure(`${N} idle streams`);
console.log(
  `extra RSS with ${N} idle streams: ${(after.rss - before.rss).toFixed(0)} MiB (target < 200), of which heap ${(after.heap - before.heap).toFixed(0)} MiB; other requests' p99 ${before.p99} -> ${after.p99} ms (${((after.p99 / before.p99 - 1) * 100).toFixed(0)}%, target within 20%)`,
);
// One line for bench/run.mjs (npm run bench), which prints the figure in its table.
console.log(
  `LIVE_SYNC ${JSON.stringify({ streams: ready, extraRss: after.rss - before.rss, extraHeap: after.heap - before.heap, p99Before: before.p99, p99After: after.p99 })}`,
);
for (const req of streams) req.destroy();

// The same number of streams on a bare node:http server: what the connections alone cost.
const bare = fork(join(root, 'bench', 'bare-sse-server.mjs'), [String(N + 100)], { execArgv: ['--expose-gc'] });
const barePort = await new Promise((r) => bare.once('message', r));
const bareMemory = () => new Promise((r) => (bare.once('message', r), bare.send('measure')));
const bareBefore = await bareMemory();
const bareStreams = await openStreams(barePort, N);
const bareAfter = await bareMemory();
console.log(
  `bare node:http with ${N} open event streams: extra RSS ${(bareAfter.rss - bareBefore.rss).toFixed(0)} MiB, heap after a full GC +${(bareAfter.heap - bareBefore.heap).toFixed(0)} MiB`,
);
console.log(`LIVE_SYNC_BARE ${JSON.stringify({ extraRss: bareAfter.rss - bareBefore.rss })}`);
for (const req of bareStreams) req.destroy();
bare.disconnect();
child.kill('SIGTERM');
await new Promise((r) => child.on('exit', r));
rmSync(dataDir, { recursive: true, force: true });
