#!/usr/bin/env node
// node bench/erasure-crash.mjs: how long an erasure cut off by a crash takes to complete after a restart, in the
// embedded mode (not a test; loopback only). One user's data is written straight into the event stores
// (export-seed.ts: --history entries, --playlists, --preferences), the embedded system started on them with
// ERASURE_TIMEOUT_MS=0, `DELETE /api/data` sent (answered 202 at once) and the process killed with SIGKILL right
// after the answer, while the participants are still erasing. Then a new process on the same data directory is
// timed: from its spawn to the gateway's readiness (the read models rebuilt), and to the erasure's `completed`
// status (polled every 20 ms).
//   --history=100000 --playlists=50 --preferences=20
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const HISTORY = arg('history', 100_000);
const PLAYLISTS = arg('playlists', 50);
const PREFERENCES = arg('preferences', 20);
const dataDir = mkdtempSync(join(tmpdir(), 'udp-bench-erasure-crash-'));
const outDir = join(root, 'tmp', `bench-erasure-crash-${process.pid}`);
const user = 'bench-erased';
const phase = (name) => process.stderr.write(`bench erasure-crash: ${name}\n`);
let child;

/** Spawns the embedded system; resolves with its gateway port once ready. */
function start() {
  child = spawn(process.execPath, [join(outDir, 'embedded', 'main.js')], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ERASURE_TIMEOUT_MS: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const running = child;
  return new Promise((resolve, reject) => {
    let out = '';
    running.stderr.on('data', (c) => {
      out += c;
      const m = /gateway on http:\/\/localhost:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    running.once('exit', (code) => reject(new Error(`embedded exited (${code}): ${out}`)));
  });
}

async function main() {
  phase('building');
  execFileSync(process.execPath, [join(root, 'tools', 'build.mjs'), '--outdir', outDir, 'embedded'], { stdio: 'inherit' });
  const { build } = await import('esbuild');
  await build({
    entryPoints: [join(root, 'bench', 'export-seed.ts')],
    outfile: join(outDir, 'export-seed.js'),
    bundle: true,
    platform: 'node',
    packages: 'external',
    tsconfig: join(root, 'tsconfig.base.json'),
    logLevel: 'warning',
  });
  phase(`seeding ${HISTORY} history entries, ${PLAYLISTS} playlists, ${PREFERENCES} preferences into the stores`);
  execFileSync(process.execPath, [join(outDir, 'export-seed.js'), dataDir, user, String(HISTORY), String(PLAYLISTS), String(PREFERENCES)], {
    stdio: 'inherit',
  });

  phase('starting, erasing, killing');
  let port = await start();
  const secret = new TextEncoder().encode(readFileSync(join(dataDir, 'secrets', 'jwt-signing.key'), 'utf8').trim());
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(user)
    .setIssuer('udp-embedded')
    .setExpirationTime('1h')
    .sign(secret);
  const headers = { authorization: `Bearer ${token}` };
  const res = await fetch(`http://127.0.0.1:${port}/api/data`, { method: 'DELETE', headers });
  const killed = child;
  killed.kill('SIGKILL');
  if (res.status !== 202) throw new Error(`erasure: ${res.status} ${await res.text()}`);
  const { erasureId, confirmed } = await res.json();
  await new Promise((r) => (killed.exitCode !== null || killed.signalCode !== null ? r() : killed.once('exit', r)));

  phase('restarting');
  const spawnedAt = performance.now();
  port = await start();
  const readyMs = performance.now() - spawnedAt;
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    const status = await (await fetch(`${base}/api/data/erasure/${erasureId}`, { headers })).json();
    if (status.status === 'completed') break;
    if (performance.now() - spawnedAt > 120_000) throw new Error(`not completed after 120 s: ${JSON.stringify(status)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const completedMs = performance.now() - spawnedAt;
  const left = (await (await fetch(`${base}/api/history/v2?limit=1&with_deleted=true`, { headers })).json()).data.length;
  process.stdout.write(`
erasure of one user cut off by SIGKILL: ${HISTORY} history entries, ${PLAYLISTS} playlists, ${PREFERENCES} preference documents
  confirmed when killed      ${confirmed.length ? confirmed.join(', ') : 'none'}
  restart -> system ready    ${readyMs.toFixed(0)} ms (read models rebuilt from the stores)
  restart -> erasure done    ${completedMs.toFixed(0)} ms (of which ${(completedMs - readyMs).toFixed(0)} ms after ready)
  history entries left       ${left}
`);
}

main()
  .catch((error) => {
    process.stderr.write(`${error.stack}\n`);
    process.exitCode = 1;
  })
  .finally(() => {
    child?.kill('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(outDir, { recursive: true, force: true });
  });
