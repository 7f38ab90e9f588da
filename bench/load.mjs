// A small load generator on keep-alive connections: closed-loop (N in flight) or open-loop (fixed rate).
import http from 'node:http';

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
          resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks), ms: Number(process.hrtime.bigint() - started) / 1e6 }),
        );
      });
      req.on('error', reject);
      if (body) req.end(body);
      else req.end();
    });
}

/** `total` requests with `concurrency` in flight; returns requests per second and latencies. */
export async function closedLoop(send, total, concurrency) {
  let next = 0;
  const latencies = [];
  const statuses = {};
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const res = await send(i);
        latencies.push(res.ms);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { rps: total / seconds, seconds, latencies, statuses };
}

/** `total` requests started at `rate` per second whatever the answers do (no coordinated omission). */
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
      send(i).then((res) => {
        // Latency from the scheduled start, so a stalled server cannot hide its queueing.
        latencies.push(performance.now() - due);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      }),
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
