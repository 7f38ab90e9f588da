#!/usr/bin/env node
// npm run bench: measures the embedded system on loopback, in one run, against a bare node:http baseline.
// Bounded loops only; every server is a child process on 127.0.0.1 and is stopped at the end.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { SignJWT } from 'jose';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { client, closedLoop, openLoop, percentile } from './load.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dataDir = mkdtempSync(join(tmpdir(), 'udp-bench-'));
const children = [];
const arg = (name, fallback) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const READS = arg('reads', 6000);
const POSTS = arg('posts', 5000);
const RATE = arg('rate', 1000);
const CONNECTIONS = arg('connections', 32);

function start(args, readyPattern, stream = 'stderr') {
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child[stream].on('data', (c) => {
      out += c;
      const m = readyPattern.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code}): ${out}`)));
  });
}

const fmt = (n, d = 1) => n.toFixed(d);
const phase = (name) => process.stderr.write(`bench: ${name}\n`);

async function main() {
  const port = await start([join(root, 'dist', 'embedded', 'main.js')], /gateway on http:\/\/localhost:(\d+)/);
  const base = `http://127.0.0.1:${port}`;
  // The first token through the documented tool; the many writers' tokens signed here with the same secret.
  const token = execFileSync(process.execPath, [join(root, 'dist', 'apps', 'gateway', 'token.js'), 'bench-reader'], { env: { ...process.env, DATA_DIR: dataDir } }).toString().trim();
  const secret = new TextEncoder().encode(readFileSync(join(dataDir, 'secrets', 'jwt-signing.key'), 'utf8').trim());
  const tokenFor = (userId) => new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(userId).setIssuer('udp-embedded').setExpirationTime('1h').sign(secret);
  const auth = (t) => ({ authorization: `Bearer ${t}`, 'content-type': 'application/json' });
  const http = client(base, CONNECTIONS);

  phase('seeding');
  // A reader with 1000 entries in their history.
  const items = Array.from({ length: 1000 }, (_, i) => ({ item_id: `urn:media:${i}`, date: 1_700_000_000_000 + i * 1000, last_playback_position: i % 3600, device_id: 'bench' }));
  const seeded = await http('POST', '/api/history/v2/batch', auth(token), JSON.stringify({ data: items }));
  if (seeded.status !== 204) throw new Error(`seeding failed: ${seeded.status} ${seeded.body}`);

  phase('reads');
  // 1. GET /api/history/v2?limit=100 through the gateway vs a bare node:http server answering the same bytes.
  const path = '/api/history/v2?limit=100';
  const sample = await http('GET', path, auth(token));
  const bodyFile = join(dataDir, 'sample.json');
  writeFileSync(bodyFile, sample.body);
  const barePort = await start([join(root, 'bench', 'bare-server.mjs'), bodyFile], /^(\d+)\n/, 'stdout');
  const bare = client(`http://127.0.0.1:${barePort}`, CONNECTIONS);
  await closedLoop(() => bare('GET', path), 1000, CONNECTIONS);
  await closedLoop(() => http('GET', path, auth(token)), 1000, CONNECTIONS);
  const bareRun = await closedLoop(() => bare('GET', path), READS, CONNECTIONS);
  const ourRun = await closedLoop(() => http('GET', path, auth(token)), READS, CONNECTIONS);
  if (ourRun.statuses[200] !== READS) throw new Error(`reads failed: ${JSON.stringify(ourRun.statuses)}`);

  phase('writes');
  // 2. POST latency at a fixed rate, spread over 200 users (one user's history takes one write at a time).
  const writers = await Promise.all(Array.from({ length: 200 }, (_, u) => tokenFor(`bench-writer-${u}`)));
  const postRun = await openLoop(
    (i) => http('POST', '/api/history/v2', auth(writers[i % writers.length]), JSON.stringify({ item_id: `urn:media:${i}`, last_playback_position: i % 600 })),
    POSTS,
    RATE,
  );

  phase('mobile sync');
  // 3. The mobile sync: push 3000 entries in one batch, then pull them by 500 following `next`.
  const mobile = await tokenFor('bench-mobile');
  const syncItems = Array.from({ length: 3000 }, (_, i) => ({ item_id: `urn:episode:${i}`, date: 1_700_000_000_000 + (i % 700) * 1000, last_playback_position: i }));
  const syncStarted = performance.now();
  const pushed = await http('POST', '/api/history/v2/batch', auth(mobile), JSON.stringify({ data: syncItems }));
  const pushMs = performance.now() - syncStarted;
  let pulled = 0;
  let pages = 0;
  let next = '?limit=500';
  while (next) {
    const page = await http('GET', `/api/history/v2${next}`, auth(mobile));
    const body = JSON.parse(page.body);
    pulled += body.data.length;
    pages++;
    next = body.next;
  }
  const syncMs = performance.now() - syncStarted;
  if (pushed.status !== 204 || pulled !== 3000) throw new Error(`sync failed: push ${pushed.status}, pulled ${pulled}`);

  const ratio = ourRun.rps / bareRun.rps;
  const p50 = percentile(postRun.latencies, 50);
  const p99 = percentile(postRun.latencies, 99);
  const lines = [
    `user-data platform benchmark (embedded mode, loopback, ${CONNECTIONS} connections, node ${process.version})`,
    ``,
    `GET ${path} (reader with 1000 entries), ${READS} requests`,
    `  bare node:http, same bytes : ${fmt(bareRun.rps, 0)} req/s`,
    `  through the gateway        : ${fmt(ourRun.rps, 0)} req/s  p50 ${fmt(percentile(ourRun.latencies, 50))} ms  p99 ${fmt(percentile(ourRun.latencies, 99))} ms`,
    `  ratio                      : ${fmt(ratio, 2)}   (target >= 0.35: ${ratio >= 0.35 ? 'met' : 'NOT met'})`,
    ``,
    `POST /api/history/v2 at ${RATE} req/s offered, ${POSTS} requests over 200 users`,
    `  achieved                   : ${fmt(postRun.rps, 0)} req/s   statuses ${JSON.stringify(postRun.statuses)}`,
    `  latency                    : p50 ${fmt(p50)} ms  p99 ${fmt(p99)} ms   (target p99 < 50 ms: ${p99 < 50 ? 'met' : 'NOT met'})`,
    ``,
    `mobile sync: push 3000 entries in one batch, pull by limit=500 following next`,
    `  push ${fmt(pushMs, 0)} ms, pull ${pages} pages, total ${fmt(syncMs, 0)} ms   (target < 1000 ms: ${syncMs < 1000 ? 'met' : 'NOT met'})`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main()
  .catch((error) => {
    process.stderr.write(`bench failed: ${error.stack ?? error}\n`);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const child of children) child.kill('SIGTERM');
    setTimeout(() => rmSync(dataDir, { recursive: true, force: true }), 500);
  });
