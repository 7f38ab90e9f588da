#!/usr/bin/env node
// node bench/export.mjs: one export of a large user on the embedded system (not a test; loopback only).
// The user's data is written straight into the event stores (export-seed.ts), the embedded system started on
// them (read models rebuilt at start), then one export is requested through the gateway and timed from the
// request to its callback (no polling load on the system), while the RSS of its process is sampled every 10 ms.
//   --history=100000 --playlists=50 --preferences=20
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const HISTORY = arg('history', 100_000);
const PLAYLISTS = arg('playlists', 50);
const PREFERENCES = arg('preferences', 20);
const dataDir = mkdtempSync(join(tmpdir(), 'udp-bench-export-'));
const outDir = join(root, 'tmp', `bench-export-${process.pid}`);
const user = 'bench-exporter';
const phase = (name) => process.stderr.write(`bench export: ${name}\n`);
let child;

/** CPU time (user + system, ms) the process has used: a figure a busy machine distorts less than wall time. */
const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 10 ms (USER_HZ 100)
};
const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

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
  let started = Date.now();
  execFileSync(process.execPath, [join(outDir, 'export-seed.js'), dataDir, user, String(HISTORY), String(PLAYLISTS), String(PREFERENCES)], {
    stdio: 'inherit',
  });
  const seedMs = Date.now() - started;

  // The callback receiver: the export is timed until the system calls back.
  let calledBack;
  const callback = new Promise((resolve) => (calledBack = resolve));
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      res.writeHead(204).end();
      calledBack({ at: performance.now(), status: JSON.parse(body) });
    });
  });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  receiver.unref();
  const receiverUrl = `http://127.0.0.1:${receiver.address().port}`;

  phase('starting the embedded system (read models rebuilt from the stores)');
  started = Date.now();
  child = spawn(process.execPath, [join(outDir, 'embedded', 'main.js')], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', EXPORT_CALLBACK_HOSTS: receiverUrl },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const port = await new Promise((resolve, reject) => {
    let out = '';
    child.stderr.on('data', (c) => {
      out += c;
      const m = /gateway on http:\/\/localhost:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`embedded exited (${code}): ${out}`)));
  });
  const startMs = Date.now() - started;
  const secret = new TextEncoder().encode(readFileSync(join(dataDir, 'secrets', 'jwt-signing.key'), 'utf8').trim());
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(user)
    .setIssuer('udp-embedded')
    .setExpirationTime('1h')
    .sign(secret);
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const base = `http://127.0.0.1:${port}`;

  // Settle, then the baseline: the process with every read model loaded, before the export.
  await new Promise((r) => setTimeout(r, 1000));
  const before = rssKb(child.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssKb(child.pid))), 10);

  phase('exporting');
  started = performance.now();
  const cpuBefore = cpuMs(child.pid);
  const res = await fetch(`${base}/api/data/export`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ fileName: 'bench', callbackUrl: `${receiverUrl}/ready` }),
  });
  if (res.status !== 201) throw new Error(`export request: ${res.status} ${await res.text()}`);
  const { key } = await res.json();
  const failed = (async () => {
    for (;;) {
      await new Promise((r) => setTimeout(r, 1000));
      const status = (await (await fetch(`${base}/api/data/export`, { headers })).json()).find((s) => s.key === key);
      if (status.status === 'failed') throw new Error(`export failed: ${status.reason}`);
    }
  })();
  const { at, status } = await Promise.race([callback, failed]);
  const exportMs = at - started;
  const exportCpuMs = cpuMs(child.pid) - cpuBefore;
  clearInterval(sampler);
  const zip = await fetch(`${base}/api/data/export/public/${key}`);
  const bytes = (await zip.arrayBuffer()).byteLength;

  const mb = (kb) => (kb / 1024).toFixed(1);
  process.stdout.write(`
export of one user: ${HISTORY} history entries, ${PLAYLISTS} playlists (20 bookmarks each), ${PREFERENCES} preference documents
  seeding the stores       ${seedMs} ms (not part of the figure)
  start (rebuild models)   ${startMs} ms (not part of the figure)
  request -> callback      ${exportMs.toFixed(0)} ms   (target < 3000 ms); CPU time of the system meanwhile ${exportCpuMs.toFixed(0)} ms
  zip                      ${(bytes / 1024 / 1024).toFixed(2)} MB (${status.size} bytes, sha256 ${status.sha256.slice(0, 12)}...)
  RSS of the system        ${mb(before)} MB before, ${mb(peak)} MB peak: growth ${mb(peak - before)} MB   (target < 150 MB)
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
