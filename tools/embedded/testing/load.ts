import { fileSecret, signDevToken } from '@udp/auth';
import type { StartedProcess } from '@udp/test-kit';
import { distinctiveUserId } from '@udp/test-system';
import { baseOf, embeddedProcess } from '../embedded-process';

/**
 * The embedded bundle built and started once for a suite (stopped and removed after it), with the settings given:
 * `system()` is the running process, `call` the API as any user.
 */
export function embeddedForSuite(name: string, settings: Record<string, string>) {
  const embedded = embeddedProcess(name);
  let system: StartedProcess | undefined;
  beforeAll(async () => {
    embedded.build();
    system = await embedded.start(settings, 120_000);
  }, 180_000);
  afterAll(async () => {
    await system?.stop();
    embedded.remove();
  });
  const running = () => system!;
  return { dataDir: embedded.dataDir, system: running, call: systemCalls(running, embedded.dataDir) };
}

/** Calls of the embedded system's public API as any user (tokens signed with the system's own secret). */
export function systemCalls(system: () => StartedProcess, dataDir: string) {
  const tokens = new Map<string, string>();
  return async function call(who: string, method: string, path: string, body?: unknown): Promise<Response> {
    let token = tokens.get(who);
    if (!token) tokens.set(who, (token = await signDevToken(fileSecret(dataDir, 'jwt-signing'), who)));
    return fetch(`${baseOf(system())}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  };
}

export type SystemCall = ReturnType<typeof systemCalls>;

/**
 * Other users of a busy system: each loop writes one entry, then reads the same user's page (rotating over 40 users),
 * paced (20 ms between pairs) so that they do not saturate the process themselves. `stop` gives the write-then-read
 * times in ms. `{ write: false }`: reads only (a device polling), which wait for no projection.
 */
export function othersWriteAndRead(call: SystemCall, { loops = 4, write = true } = {}) {
  const latencies: number[] = [];
  const failures: string[] = [];
  let running = true;
  const users = Array.from({ length: 40 }, (_, i) => distinctiveUserId(`other${i}-`));
  const loop = async (n: number) => {
    for (let i = n; running; i += loops) {
      const who = users[i % users.length];
      const started = performance.now();
      const wrote = write
        ? await call(who, 'POST', '/api/history/v2', { item_id: `urn:other:${i}`, last_playback_position: i })
        : { ok: true, status: 200 };
      const read = await call(who, 'GET', '/api/history/v2?limit=10');
      await read.arrayBuffer();
      latencies.push(performance.now() - started);
      if (!wrote.ok || read.status !== 200) failures.push(`${wrote.status}/${read.status}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const done = Promise.all(Array.from({ length: loops }, (_, n) => loop(n)));
  return {
    async stop() {
      running = false;
      await done;
      const sorted = [...latencies].sort((a, b) => a - b);
      const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
      return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: Math.round(sorted[sorted.length - 1] ?? 0), failures };
    },
  };
}

/** `count` history entries of `who` (item ids that name the user), watched in the last hours: in the trending window. */
export function recentEntries(who: string, from: number, count: number, now = Date.now()) {
  return Array.from({ length: count }, (_, i) => ({
    item_id: `urn:${who}:${from + i}`,
    date: now - 10_000_000 + from + i,
    last_playback_position: i,
  }));
}
