// node bench/profile.mjs [seconds]: the embedded bundle under GET limit=100 (autocannon, 32 connections); prints server CPU
// µs per request (from /proc), WRITES=1 for POSTs over 200 users, POLL=1 for the sync poll when nothing changed (a
// one-entry page: `with_deleted=true&after=<last_update>&limit=500`), READERS=N to spread the reads over N users; with PROF=<dir>, leaves a V8 CPU profile there for bench/layers.mjs. ROOT=<checkout> to A/B.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { BENCH_RATE_LIMITS, gatewayPortOf } from './load.mjs';
const root = process.env.ROOT ?? join(dirname(fileURLToPath(import.meta.url)), '..');
const dataDir = mkdtempSync(join(tmpdir(), 'prof-'));
const child = spawn(
  process.execPath,
  [...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.PROF] : []), join(root, 'dist/embedded/main.js')],
  { env: { ...process.env, ...BENCH_RATE_LIMITS, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] },
);
const port = await gatewayPortOf(child);
const token = execFileSync(process.execPath, [join(root, 'dist/apps/gateway/token.js'), 'reader'], {
  env: { ...process.env, DATA_DIR: dataDir },
})
  .toString()
  .trim();
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
const items = Array.from({ length: 1000 }, (_, i) => ({
  item_id: `urn:media:${i}`,
  date: 1_700_000_000_000 + i * 1000,
  last_playback_position: i % 3600,
  device_id: 'bench',
}));
await fetch(`http://127.0.0.1:${port}/api/history/v2/batch`, { method: 'POST', headers, body: JSON.stringify({ data: items }) });
// WRITES=1: POST /api/history/v2 over 200 users instead (one user's history takes one write at a time).
const { SignJWT } = await import('jose');
const key = new TextEncoder().encode(readFileSync(join(dataDir, 'secrets', 'jwt-signing.key'), 'utf8').trim());
const writers = await Promise.all(
  Array.from({ length: 200 }, (_, u) =>
    new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(`w-${u}`).setIssuer('udp-embedded').setExpirationTime('1h').sign(key),
  ),
);
let n = 0;
const writeRequest = (req) => ({
  ...req,
  method: 'POST',
  headers: { ...headers, authorization: `Bearer ${writers[n % 200]}` },
  body: JSON.stringify({ item_id: `urn:w:${n++}` }),
});
// READERS=N: the reads rotate over N users of 100 entries each (as `npm run bench` does), not the one reader.
const READERS = Number(process.env.READERS ?? 0);
const readers = await Promise.all(
  Array.from({ length: READERS }, async (_, u) => {
    const jwt = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(`r-${u}`)
      .setIssuer('udp-embedded')
      .setExpirationTime('1h')
      .sign(key);
    const auth = { ...headers, authorization: `Bearer ${jwt}` };
    const data = items.slice(0, 100);
    await fetch(`http://127.0.0.1:${port}/api/history/v2/batch`, { method: 'POST', headers: auth, body: JSON.stringify({ data }) });
    return {
      auth,
      lastUpdate: (await (await fetch(`http://127.0.0.1:${port}/api/history/v2?limit=0`, { headers: auth })).json()).last_update,
    };
  }),
);
const { last_update: lastUpdate } = await (await fetch(`http://127.0.0.1:${port}/api/history/v2?limit=0`, { headers })).json();
const pathOf = (after) => (process.env.POLL ? `/api/history/v2?with_deleted=true&after=${after}&limit=500` : '/api/history/v2?limit=100');
let nextReader = 0;
const readRequest = (req) => {
  const reader = readers[nextReader++ % READERS];
  return { ...req, method: 'GET', path: pathOf(reader.lastUpdate), headers: reader.auth };
};
const run = (d) =>
  new Promise((r) =>
    autocannon(
      process.env.WRITES
        ? { url: `http://127.0.0.1:${port}/api/history/v2`, connections: 32, duration: d, requests: [{ setupRequest: writeRequest }] }
        : READERS
          ? { url: `http://127.0.0.1:${port}/`, connections: 32, duration: d, requests: [{ setupRequest: readRequest }] }
          : { url: `http://127.0.0.1:${port}${pathOf(lastUpdate)}`, connections: 32, duration: d, headers },
      (e, res) => r(res),
    ),
  );
const warm = await run(3);
console.log(JSON.stringify({ warmupRequests: warm.requests.total }));

const cpu = () => {
  const f = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10_000;
}; // µs (100 Hz ticks)
const cpuBefore = cpu();
const res = await run(Number(process.argv[2] ?? 10));
const cpuUs = cpu() - cpuBefore;
console.log(
  JSON.stringify({
    cpuUsPerRequest: Math.round(cpuUs / res.requests.total),
    rps: res.requests.average,
    total: res.requests.total,
    p99: res.latency.p99,
    non2xx: res.non2xx,
  }),
);
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
rmSync(dataDir, { recursive: true, force: true });
