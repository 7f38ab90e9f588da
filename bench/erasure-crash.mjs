#!/usr/bin/env node
// node bench/erasure-crash.mjs: how long an erasure cut off by a crash takes to complete after a restart, in the
// embedded mode (not a test; loopback only). One user's data is written straight into the event stores
// (export-seed.ts: --history entries, --playlists, --preferences), the embedded system started on them with
// ERASURE_TIMEOUT_MS=0, `DELETE /api/data` sent (answered 202 at once) and the process killed with SIGKILL right
// after the answer, while the participants are still erasing. Then a new process on the same data directory is
// timed: from its spawn to the gateway's readiness (the read models rebuilt), and to the erasure's `completed`
// status (polled every 20 ms).
//   --history=100000 --playlists=50 --preferences=20
import { seededUserBench } from './seeded-user.mjs';

const bench = seededUserBench('erasure-crash', 'bench-erased');
const { history: HISTORY, playlists: PLAYLISTS, preferences: PREFERENCES, phase } = bench;
const start = () => bench.start({ ERASURE_TIMEOUT_MS: '0' });

async function main() {
  await bench.buildAndSeed();

  phase('starting, erasing, killing');
  let port = await start();
  const headers = { authorization: await bench.authorization() };
  const res = await fetch(`http://127.0.0.1:${port}/api/data`, { method: 'DELETE', headers });
  const killed = bench.child;
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

bench.run(main);
