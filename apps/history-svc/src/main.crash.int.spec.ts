import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InternalIdentity, fileSecret } from '@udp/auth';
import { type StartedProcess, startProcess } from '@udp/test-kit';

/**
 * Durability through the real entry point: history-svc runs as its own process on a SQLite store, is killed
 * with SIGKILL in the middle of a stream of writes, and restarted on the same data directory. Every write that
 * was acknowledged before the kill must be readable after the restart.
 */
const root = join(__dirname, '..', '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'udp-crash-'));
// The bundle keeps node_modules external, so it must live inside the repo to find them (tmp/ is ignored).
const distDir = join(root, 'tmp', `crash-${process.pid}`);
let bundle: string;

beforeAll(() => {
  execFileSync(process.execPath, [join(root, 'tools', 'build.mjs'), '--outdir', distDir, 'history-svc'], { stdio: 'inherit' });
  bundle = join(distDir, 'apps', 'history-svc', 'main.js');
}, 60_000);
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(distDir, { recursive: true, force: true });
});

/** The service on `dataDir`; `embedded`: SQLite read models and the in-process bus even when the run has servers. */
const startService = (dataDir: string, { embedded = false } = {}) => {
  const { MONGO_URL: _mongo, KAFKA_BROKERS: _kafka, ...withoutServers } = process.env;
  return startProcess(
    bundle,
    { ...(embedded ? withoutServers : process.env), DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    {
      stream: 'stdout',
      pattern: /"port":(\d+).*history-svc listening/,
    },
  );
};
const portOf = (service: StartedProcess) => Number(service.ready[1]);

it('keeps every acknowledged write across kill -9 and restart', async () => {
  const dataDir = join(dir, 'data');
  const identity = new InternalIdentity(fileSecret(dataDir, 'internal-identity'));
  const headers = () => ({ 'content-type': 'application/json', 'x-udp-identity': identity.sign({ userId: 'dave' }) });

  const first = await startService(dataDir);
  const acknowledged: string[] = [];
  let killed = false;
  // Four writers in parallel; the process is killed once 60 writes were acknowledged, with others in flight.
  const writer = async (w: number) => {
    for (let i = 0; !killed; i++) {
      const itemId = `w${w}-${i}`;
      try {
        const res = await fetch(`http://127.0.0.1:${portOf(first)}/api/history/v2`, {
          method: 'POST',
          headers: headers(),
          body: JSON.stringify({ item_id: itemId, date: 1_000_000 + i }),
        });
        if (res.status === 200) acknowledged.push(itemId);
      } catch {
        return; // connection dropped by the kill: not acknowledged
      }
      if (acknowledged.length >= 60 && !killed) {
        killed = true;
        first.child.kill('SIGKILL');
      }
    }
  };
  await Promise.all([0, 1, 2, 3].map(writer));
  await first.exited;

  const second = await startService(dataDir);
  try {
    const res = await fetch(`http://127.0.0.1:${portOf(second)}/api/history/v2?limit=1000`, { headers: headers() });
    const stored = new Set(((await res.json()) as { data: Array<{ item_id: string }> }).data.map((i) => i.item_id));
    const lost = acknowledged.filter((id) => !stored.has(id));
    expect(acknowledged.length).toBeGreaterThanOrEqual(60);
    expect(lost).toEqual([]);
  } finally {
    await second.stop();
  }
  expect(readFileSync(join(dataDir, 'history-svc', 'events.sqlite')).length).toBeGreaterThan(0);
}, 60_000);

it('shows a batch acknowledged just before kill -9 after the restart (its rows applied again from the checkpoint)', async () => {
  const dataDir = join(dir, 'batch');
  const identity = new InternalIdentity(fileSecret(dataDir, 'internal-identity'));
  const headers = { 'content-type': 'application/json', 'x-udp-identity': identity.sign({ userId: 'erin' }) };
  // The inline projection is the embedded mode's (the distributed mode's projector is the first test's subject).
  const first = await startService(dataDir, { embedded: true });
  const data = Array.from({ length: 2000 }, (_, i) => ({ item_id: `urn:erin:${i}`, date: 1_000_000 + i }));
  const res = await fetch(`http://127.0.0.1:${portOf(first)}/api/history/v2/batch`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ data }),
  });
  // Killed as soon as it is answered: the read models' transaction (committed every 50 ms) is most likely lost.
  first.child.kill('SIGKILL');
  expect(res.status).toBe(204);
  await first.exited;

  const second = await startService(dataDir, { embedded: true });
  try {
    const seen: string[] = [];
    for (let query: string | undefined = '?limit=1000'; query;) {
      const page = (await (await fetch(`http://127.0.0.1:${portOf(second)}/api/history/v2${query}`, { headers })).json()) as {
        data: Array<{ item_id: string }>;
        next?: string;
      };
      seen.push(...page.data.map((entry) => entry.item_id));
      query = page.next;
    }
    expect(new Set(seen)).toEqual(new Set(data.map((entry) => entry.item_id)));
  } finally {
    await second.stop();
  }
}, 60_000);
