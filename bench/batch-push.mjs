#!/usr/bin/env node
// node bench/batch-push.mjs [--entries=3000] [--users=11] [--recent]: the mobile sync of `npm run bench` on its own,
// repeated: each of `--users` users pushes one `POST /api/history/v2/batch` of `--entries` entries, then pulls them by
// 500 following `next`, one user after the other, on a fresh embedded system (a child process, rate limits off).
// Prints each push+pull in ms and the server's CPU (all its threads, from /proc) per push+pull after the first.
// Dates of 2023 as `npm run bench` sends them (outside the trending window); `--recent`: of the last hour, so the
// trending counts take every entry too. ROOT=<another checkout> runs that checkout's bundle (an A/B). Loopback only.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_RATE_LIMITS } from './load.mjs';

const root = process.env.ROOT ?? join(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const ENTRIES = Number(arg('entries', 3000));
const USERS = Number(arg('users', 11));
const RECENT = process.argv.includes('--recent');

const dataDir = mkdtempSync(join(tmpdir(), 'batch-push-'));
const child = spawn(process.execPath, [join(root, 'dist/embedded/main.js')], {
  env: { ...process.env, ...BENCH_RATE_LIMITS, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'ignore', 'pipe'],
});
const port = await new Promise((resolve, reject) => {
  let output = '';
  child.stderr.on('data', (chunk) => {
    output += chunk;
    const ready = /gateway on http:\/\/localhost:(\d+)/.exec(output);
    if (ready) resolve(ready[1]);
  });
  child.on('exit', (code) => reject(new Error(`the system exited (${code}) before it was ready`)));
});
const tokenOf = (user) =>
  execFileSync(process.execPath, [join(root, 'dist/apps/gateway/token.js'), user], { env: { ...process.env, DATA_DIR: dataDir } })
    .toString()
    .trim();
const call = (token, method, path, body) =>
  fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
/** User + system CPU (ms) in a `/proc/.../stat` text; the fields after the name, which may hold spaces and ')'. */
const statMs = (stat) => {
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
/** The server's CPU so far (user + system, all threads), in ms. */
const cpuMs = () => statMs(readFileSync(`/proc/${child.pid}/stat`, 'utf8'));

/** The CPU of each of the server's threads so far (user + system), in ms, by thread id and name. */
const threadsMs = () =>
  new Map(
    readdirSync(`/proc/${child.pid}/task`).map((tid) => {
      const stat = readFileSync(`/proc/${child.pid}/task/${tid}/stat`, 'utf8');
      return [`${stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))}#${tid}`, statMs(stat)];
    }),
  );

const now = Date.now();
const rounds = [];
let threadsBefore;
let cpuAfterFirst = 0;
try {
  for (let u = 0; u < USERS; u++) {
    const user = `sync-${u}`;
    const token = tokenOf(user);
    const data = Array.from({ length: ENTRIES }, (_, i) => ({
      item_id: `urn:${user}:${i}`,
      date: RECENT ? now - 3600_000 + i : 1_700_000_000_000 + (i % 700) * 1000,
      last_playback_position: i,
    }));
    const cpuBefore = cpuMs();
    if (u === 1) threadsBefore = threadsMs();
    const started = performance.now();
    const pushed = await call(token, 'POST', '/api/history/v2/batch', { data });
    if (pushed.status !== 204) throw new Error(`push: ${pushed.status} ${await pushed.text()}`);
    const pushedAt = performance.now();
    let pulled = 0;
    for (let next = '?limit=500'; next;) {
      const page = await (await call(token, 'GET', `/api/history/v2${next}`)).json();
      pulled += page.data.length;
      next = page.next;
    }
    if (pulled !== ENTRIES) throw new Error(`pulled ${pulled} of ${ENTRIES}`);
    if (u > 0) cpuAfterFirst += cpuMs() - cpuBefore;
    rounds.push(`${Math.round(pushedAt - started)}+${Math.round(performance.now() - pushedAt)}`);
  }
  console.log(
    `push+pull ms of ${ENTRIES} (${RECENT ? 'dates of the last hour' : 'dates of 2023'}): ${rounds.join(' ')}` +
      ` | server CPU per push+pull after the first: ${Math.round(cpuAfterFirst / Math.max(1, USERS - 1))} ms`,
  );
  // Where that CPU went: each thread that took 1 ms or more per push+pull (the main thread is `node`, or `MainThread`).
  const per = [...threadsMs()]
    .map(([thread, ms]) => [thread, (ms - (threadsBefore?.get(thread) ?? 0)) / Math.max(1, USERS - 1)])
    .filter(([, ms]) => ms >= 1)
    .map(([thread, ms]) => `${thread} ${ms.toFixed(0)}`);
  console.log(`by thread, ms per push+pull after the first: ${per.join(', ')}`);
} finally {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.on('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
}
