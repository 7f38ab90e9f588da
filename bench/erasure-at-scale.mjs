#!/usr/bin/env node
// node bench/erasure-at-scale.mjs [--users=10000] [--long=100000]: erasures in the embedded system (`npm start`'s
// bundle) holding about users x 100 + long history entries (the bench's 1,130,000 events by default), while a probe
// asks the gateway's /livez every 5 ms (how long the event loop is held) and other users write one entry each 20 ms
// (how long a write waits, the event store's writer lock included). Erases a 100-entry user, then the long history,
// then prints each erasure's time and the probes' worst figures. Not a test: it asserts nothing and never runs in CI.
// Run `node tools/build.mjs` first (the bundle and dist/bench/seed.js); on the production Node (bench/on-production-node.sh).
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const users = arg('users', 10_000);
const long = arg('long', 100_000);
const dataDir = mkdtempSync(join(tmpdir(), 'udp-erasure-scale-'));
const port = 18000 + Math.floor(Math.random() * 1000);
const base = `http://127.0.0.1:${port}`;

function startSystem() {
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      join(root, 'dist', 'embedded', 'main.js'),
    ],
    {
      env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', ERASURE_TIMEOUT_MS: '60000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  // The erasures' own lines (each step's time, the compaction's): where the time went.
  child.stdout.on('data', (chunk) => {
    for (const line of chunk.toString().split('\n'))
      if (/user data erased|read models compacted/.test(line) && /history-svc/.test(line)) process.stderr.write(`  ${line}\n`);
  });
  return new Promise((resolve, reject) => {
    let text = '';
    child.stderr.on('data', (chunk) => {
      text += chunk;
      if (/gateway on http/.test(text)) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${text.slice(-2000)}`)));
  });
}

const token = (who) =>
  execFileSync(process.execPath, [join(root, 'tools', 'token.mjs'), who], { env: { ...process.env, DATA_DIR: dataDir } })
    .toString()
    .trim()
    .split('\n')
    .pop();

async function probe(path, everyMs, request) {
  const times = [];
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const started = performance.now();
      const answer = await request(i);
      await answer.arrayBuffer();
      times.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return async () => {
    running = false;
    await loop;
    times.sort((a, b) => a - b);
    return { path, count: times.length, p99: times[Math.floor(times.length * 0.99)] ?? 0, max: times.at(-1) ?? 0 };
  };
}

/** `headers`: the erased user's, made before the probes start (minting a token blocks this process). */
async function erase(headers) {
  const started = performance.now();
  const answer = await fetch(`${base}/api/data`, { method: 'DELETE', headers });
  if (answer.status === 204) return performance.now() - started;
  const { erasureId } = await answer.json();
  for (;;) {
    const { status } = await (await fetch(`${base}/api/data/erasure/${erasureId}`, { headers })).json();
    if (status === 'completed') return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

try {
  mkdirSync(join(dataDir, 'history-svc'), { recursive: true });
  const seedStarted = performance.now();
  execFileSync(
    process.execPath,
    [
      join(root, 'dist', 'bench', 'seed.js'),
      join(dataDir, 'history-svc', 'events.sqlite'),
      String(users),
      '100',
      'bench-long',
      String(long),
    ],
    {
      stdio: 'inherit',
    },
  );
  process.stderr.write(
    `seeded ${users * 100 + long} events in ${Math.round(performance.now() - seedStarted)} ms; first start (read models built)...\n`,
  );
  let system = await startSystem();
  system.kill('SIGTERM');
  await new Promise((resolve) => system.once('exit', resolve));
  system = await startSystem();
  try {
    const writers = Array.from({ length: 20 }, (_, i) => `writer-${i}`);
    const writerTokens = writers.map(token);
    for (const [label, who] of [
      ['a 100-entry user', 'seed-user-7'],
      [`the ${long}-entry history`, 'bench-long'],
    ]) {
      const headers = { authorization: `Bearer ${token(who)}` };
      const live = await probe('/livez', 5, () => fetch(`${base}/livez`));
      const writes = await probe('POST /api/history/v2', 20, (i) =>
        fetch(`${base}/api/history/v2`, {
          method: 'POST',
          headers: { authorization: `Bearer ${writerTokens[i % writers.length]}`, 'content-type': 'application/json' },
          body: JSON.stringify({ item_id: `urn:w:${i}`, last_playback_position: i }),
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      const erasedMs = await erase(headers);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const [l, w] = [await live(), await writes()];
      const f = (n) => n.toFixed(1);
      console.log(
        `[erasure-at-scale] ${users * 100 + long} entries; erased ${label} in ${Math.round(erasedMs)} ms; ` +
          `/livez p99 ${f(l.p99)} max ${f(l.max)} ms (${l.count}); other writes p99 ${f(w.p99)} max ${f(w.max)} ms (${w.count})`,
      );
    }
  } finally {
    system.kill('SIGTERM');
    await new Promise((resolve) => system.once('exit', resolve));
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
