#!/usr/bin/env node
// node bench/export.mjs: one export of a large user on the embedded system (not a test; loopback only).
// The user's data is written straight into the event stores (export-seed.ts), the embedded system started on
// them (read models rebuilt at start), then one export is requested through the gateway and timed from the
// request to its callback (no polling load on the system), while the RSS of its process is sampled every 10 ms.
//   --history=100000 --playlists=50 --preferences=20
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { seededUserBench } from './seeded-user.mjs';

const bench = seededUserBench('export', 'bench-exporter');
const { history: HISTORY, playlists: PLAYLISTS, preferences: PREFERENCES, phase } = bench;

/** CPU time (user + system, ms) the process has used: a figure a busy machine distorts less than wall time. */
const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 10 ms (USER_HZ 100)
};
const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

async function main() {
  const seedMs = await bench.buildAndSeed();

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
  let started = Date.now();
  const port = await bench.start({ EXPORT_CALLBACK_HOSTS: receiverUrl });
  const child = bench.child;
  const startMs = Date.now() - started;
  const headers = { authorization: await bench.authorization(), 'content-type': 'application/json' };
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

bench.run(main);
