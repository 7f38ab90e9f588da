// node bench/open-post.mjs: the POST row of `npm run bench` on its own, on a fresh embedded system with nothing seeded:
// `POST /api/history/v2` over 200 writers, `RATE` (5,000) per second offered, open loop (`load.mjs`), `TOTAL`
// requests (6 s' worth), after 4,000 at 1,000/s to warm up. Prints the served rate, p50/p99 from each request's
// scheduled start, the statuses and the server's CPU per request (all its threads, from /proc). ROOT=<checkout> to A/B.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';
import { BENCH_RATE_LIMITS, client, gatewayPortOf, openLoop, percentile } from './load.mjs';

const root = process.env.ROOT ?? join(dirname(fileURLToPath(import.meta.url)), '..');
const RATE = Number(process.env.RATE ?? 5000);
const TOTAL = Number(process.env.TOTAL ?? RATE * 6);
const dataDir = mkdtempSync(join(tmpdir(), 'open-post-'));
const child = spawn(process.execPath, [join(root, 'dist/embedded/main.js')], {
  env: { ...process.env, ...BENCH_RATE_LIMITS, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'ignore', 'pipe'],
});
const port = await gatewayPortOf(child);
const key = new TextEncoder().encode(readFileSync(join(dataDir, 'secrets', 'jwt-signing.key'), 'utf8').trim());
const writers = await Promise.all(
  Array.from({ length: 200 }, (_, u) =>
    new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(`w-${u}`).setIssuer('udp-embedded').setExpirationTime('1h').sign(key),
  ),
);
const send = client(`http://127.0.0.1:${port}`, 256);
const post = (prefix) => (i) =>
  send(
    'POST',
    '/api/history/v2',
    { authorization: `Bearer ${writers[i % 200]}`, 'content-type': 'application/json' },
    JSON.stringify({ item_id: `${prefix}${i}`, last_playback_position: i % 600 }),
  );
const cpuMs = () => {
  const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
try {
  await openLoop(post('urn:warm:'), 4000, 1000);
  const before = cpuMs();
  const run = await openLoop(post('urn:media:'), TOTAL, RATE);
  const served = Object.entries(run.statuses)
    .filter(([status]) => status.startsWith('2'))
    .reduce((sum, [, count]) => sum + count, 0);
  console.log(
    JSON.stringify({
      served: Math.round(served / run.seconds),
      p50: Number(percentile(run.latencies, 50).toFixed(1)),
      p99: Number(percentile(run.latencies, 99).toFixed(1)),
      statuses: run.statuses,
      cpuUsPerRequest: Math.round(((cpuMs() - before) * 1000) / TOTAL),
    }),
  );
} finally {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.on('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
}
