#!/usr/bin/env node
// node bench/rebuild.mjs [rounds]: the start with no saved state (read models and snapshots rebuilt from the events) on
// one seeded store of 1,130,000 events, as `npm run bench` seeds it, timed from spawn to "gateway on". With
// ROOT_A=<another checkout> it alternates that checkout's bundle with this one's, for an A/B on the same events.
// Run `node tools/build.mjs` first (in each checkout); on the production Node (bench/on-production-node.sh). Each start
// is given up after 180 s; every data directory is removed at the end.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');
const builds = [...(process.env.ROOT_A ? [['A', process.env.ROOT_A]] : []), ['this', here]];
const rounds = Number(process.argv[2] ?? 2);

const seedDir = mkdtempSync(join(tmpdir(), 'rebuild-seed-'));
mkdirSync(join(seedDir, 'history-svc'), { recursive: true });
// 10,000 users x 100 entries, one history of 100,000 events, 200 readers x 150: the store of `npm run bench`.
const seedArgs = ['10000', '100', 'bench-long', '100000', '200', '150'];
execFileSync(process.execPath, [join(here, 'dist/bench/seed.js'), join(seedDir, 'history-svc', 'events.sqlite'), ...seedArgs]);

function startOnce(root) {
  const dataDir = mkdtempSync(join(tmpdir(), 'rebuild-run-'));
  cpSync(seedDir, dataDir, { recursive: true });
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [join(root, 'dist/embedded/main.js')], {
      env: { ...process.env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const giveUp = setTimeout(() => child.kill('SIGKILL'), 180_000);
    let output = '';
    let readyMs;
    child.stderr.on('data', (chunk) => {
      output += chunk;
      if (readyMs === undefined && /gateway on http/.test(output)) {
        readyMs = performance.now() - started;
        child.kill('SIGTERM');
      }
    });
    child.on('exit', () => {
      clearTimeout(giveUp);
      rmSync(dataDir, { recursive: true, force: true });
      if (readyMs === undefined) reject(new Error(`${root}: not ready within 180 s`));
      else resolve(readyMs);
    });
  });
}

try {
  for (let round = 0; round < rounds; round++) {
    for (const [name, root] of builds) {
      const ms = await startOnce(root);
      console.log(`${name} (${root}): start with no saved state ${(ms / 1000).toFixed(2)} s (load ${loadavg()[0].toFixed(1)})`);
    }
  }
} finally {
  rmSync(seedDir, { recursive: true, force: true });
}
