// The open-loop generator (fixed offered rate, latency from the scheduled start) on keep-alive connections.
// Closed-loop throughput is autocannon's job (run.mjs): this generator tops out far below a bare server.
import http from 'node:http';

/**
 * The gateway's rate limits out of reach (docs/architecture.md, "The public edge"): the read figure is 200 users at
 * thousands of requests per second from one loopback address, far above the defaults (1,000 per user and 10,000 per address in
 * 10 s). The limiters still run, so their cost is in the figures.
 */
export const BENCH_RATE_LIMITS = { RATE_LIMIT_PER_USER: '1000000000', RATE_LIMIT_PER_ADDRESS: '1000000000' };

/** The port of a system started as a child process, from its `gateway on http://localhost:<port>` line on stderr. */
export function gatewayPortOf(child) {
  return new Promise((resolve) => {
    let output = '';
    child.stderr.on('data', (chunk) => {
      output += chunk;
      const ready = /gateway on http:\/\/localhost:(\d+)/.exec(output);
      if (ready) resolve(ready[1]);
    });
  });
}

/** Resolves once the system at `base` answers `/livez` (a minute at most). */
export async function untilLive(base) {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/livez`)).ok) return;
    } catch {
      if (i > 600) throw new Error('the embedded system did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export function client(base, connections) {
  const url = new URL(base);
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  return (method, path, headers = {}, body) =>
    new Promise((resolve, reject) => {
      const started = process.hrtime.bigint();
      const req = http.request({ host: url.hostname, port: url.port, method, path, headers, agent }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            headers: res.headers,
            body: Buffer.concat(chunks),
            ms: Number(process.hrtime.bigint() - started) / 1e6,
          }),
        );
      });
      req.on('error', reject);
      if (body) req.end(body);
      else req.end();
    });
}

/**
 * `total` requests started at `rate` per second whatever the answers do (no coordinated omission). Returns the rate
 * achieved, every latency and the count of each status; a request that failed without an answer (connection
 * refused or reset) counts as status `error`.
 */
export async function openLoop(send, total, rate) {
  const latencies = [];
  const statuses = {};
  const interval = 1000 / rate;
  const started = performance.now();
  const inFlight = [];
  for (let i = 0; i < total; i++) {
    const due = started + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inFlight.push(
      send(i).then(
        (res) => {
          // Latency from the scheduled start, so a stalled server cannot hide its queueing.
          latencies.push(performance.now() - due);
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        },
        () => {
          statuses.error = (statuses.error ?? 0) + 1;
        },
      ),
    );
  }
  await Promise.all(inFlight);
  const seconds = (performance.now() - started) / 1000;
  return { rps: total / seconds, seconds, latencies, statuses };
}

export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
