#!/usr/bin/env node
// node bench/cold-write.mjs [restarts]: the bench's cold-write scenario alone, without the million other documents.
// Seeds 100 users x 10 entries and one history of LONG (default 100,000) events straight into a fresh store, writes
// once on the long history (no snapshot yet), stops; then per restart: starts the embedded bundle, writes once for
// another user (so no first-request cost is counted), then three writes on the long history: the cold one (state from
// its snapshot), the next and the third, each timed from the client. ROOT=<checkout> runs that checkout's bundle.
// Run it through bench/on-production-node.sh after `npm run build`. Loopback only; every loop is bounded.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';

const root = resolve(process.env.ROOT ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
const restarts = Number(process.argv[2] ?? 4);
const long = Number(process.env.LONG ?? 100_000);
const dataDir = mkdtempSync(join(tmpdir(), 'udp-cold-write-'));
execFileSync(process.execPath, [
  join(root, 'dist/bench/seed.js'),
  join(dataDir, 'history-svc/events.sqlite'),
  '100',
  '10',
  'bench-long',
  String(long),
]);

function startEmbedded() {
  const child = spawn(process.execPath, [join(root, 'dist/embedded/main.js')], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((ready, fail) => {
    let output = '';
    child.stderr.on('data', (chunk) => {
      output += chunk;
      const port = /gateway on http:\/\/localhost:(\d+)/.exec(output)?.[1];
      if (port) ready({ child, port: Number(port) });
    });
    child.once('exit', (code) => fail(new Error(`embedded exited (${code}): ${output}`)));
  });
}

const stop = (child) => new Promise((done) => (child.once('exit', done), child.kill('SIGTERM')));

async function post(port, token, itemId) {
  const started = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}/api/history/v2`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ item_id: itemId }),
  });
  await res.text();
  if (res.status !== 200) throw new Error(`POST ${itemId}: ${res.status}`);
  return performance.now() - started;
}

let system = await startEmbedded();
const key = new TextEncoder().encode(readFileSync(join(dataDir, 'secrets/jwt-signing.key'), 'utf8').trim());
const token = (user) =>
  new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(user).setIssuer('udp-embedded').setExpirationTime('1h').sign(key);
const [longUser, otherUser] = [await token('bench-long'), await token('bench-other')];
const ms = (n) => n.toFixed(1);
console.log(`first write ever on the ${long}-event history: ${ms(await post(system.port, longUser, 'urn:long:first'))} ms`);
await stop(system.child);
for (let round = 1; round <= restarts; round++) {
  system = await startEmbedded();
  await post(system.port, otherUser, `urn:other:${round}`);
  const cold = await post(system.port, longUser, `urn:long:cold-${round}`);
  const next = await post(system.port, longUser, `urn:long:next-${round}`);
  const third = await post(system.port, longUser, `urn:long:third-${round}`);
  console.log(`restart ${round}: cold ${ms(cold)} ms, next ${ms(next)} ms, third ${ms(third)} ms`);
  await stop(system.child);
}
rmSync(dataDir, { recursive: true, force: true });
