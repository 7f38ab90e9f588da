import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileSecret, signDevToken } from '@udp/auth';
import { SqliteEventStore } from '@udp/eventstore';
import { type StartedProcess, waitUntil } from '@udp/test-kit';
import { bytesFoundUnder, distinctiveUserId } from '@udp/test-system';
import { historyStreamId } from '../../apps/history-svc/src/domain/aggregate';
import { baseOf, embeddedProcess } from './embedded-process';

/**
 * Issue 18 #2, as an attacker did it on `npm start`: the embedded bundle as a process, a user with a large history
 * (seeded straight into the history store), `DELETE /api/data` answered 202, then kill -9 while the participants are
 * still erasing (an export of the user in flight too). After a restart on the same data directory the erasure completes by itself, the user's data is gone
 * through every API, a bystander keeps theirs, and no file under the data directory holds the user id.
 */
const embedded = embeddedProcess('erasure-crash');
const { dataDir } = embedded;
const ENTRIES = Number(process.env.ERASURE_CRASH_ENTRIES ?? 50_000);
const seededAt = Date.now();
const user = distinctiveUserId('erased');
const bystander = distinctiveUserId('bystander');
jest.setTimeout(180_000);

beforeAll(async () => {
  embedded.build();
  mkdirSync(join(dataDir, 'history-svc'), { recursive: true });
  const store = new SqliteEventStore(join(dataDir, 'history-svc', 'events.sqlite'));
  for (const [who, count] of [
    [user, ENTRIES],
    [bystander, 10],
  ] as const) {
    for (let from = 0; from < count; from += 5000) {
      const events = Array.from({ length: Math.min(5000, count - from) }, (_, i) => ({
        id: randomUUID(),
        type: 'HistoryItemRecorded',
        data: {
          itemId: `urn:${who}:${from + i}`,
          id: from + i + 1,
          // Watched in the last hours: each counts for trending, which the first start builds and the erasure takes
          // them out of (a rebuild of these without the indexes its projection reads took a minute; now seconds).
          date: seededAt - 10_000_000 + from + i,
          deleted: false,
          deviceId: 'seed',
          lastPlaybackPosition: 1,
        },
        // Owned as the command handler records it: the service folds and projects these events as its own.
        metadata: { owner: { userId: who } },
      }));
      await store.appendToStream(historyStreamId(who), events, { expectedRevision: 'any' });
    }
  }
  await store.close();
}, 120_000);
afterAll(() => embedded.remove());

// ERASURE_TIMEOUT_MS=0: the erasure answers 202 at once, while every participant is still at work.
// 30 s: the first start rebuilds the read models of 50,000 events (5 s here).
const startEmbedded = () => embedded.start({ LOG_LEVEL: 'info', ERASURE_TIMEOUT_MS: '0' }, 30_000);

it('completes an erasure cut off by kill -9 after a restart, and leaves no byte of the user under DATA_DIR', async () => {
  const first = await startEmbedded();
  const auth = (who: string) => signDevToken(fileSecret(dataDir, 'jwt-signing'), who).then((t) => ({ authorization: `Bearer ${t}` }));
  const call = async (system: StartedProcess, who: string, method: string, path: string, body?: unknown) =>
    fetch(`${baseOf(system)}${path}`, {
      method,
      headers: { ...(await auth(who)), 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  let erasureId: string;
  try {
    // Data in every participant besides the seeded history.
    expect((await call(first, user, 'PUT', '/api/profile/v3', { displayName: 'Gone' })).status).toBe(200);
    expect((await call(first, user, 'PUT', '/api/preference/ui', { theme: user })).status).toBeLessThan(300);
    expect((await call(first, user, 'POST', '/api/playlist/v3/watch_later/bookmarks', { itemId: `urn:${user}:b` })).status).toBe(201);
    const total = (await (await call(first, user, 'GET', '/api/history/v2?limit=1')).json()) as { data: unknown[] };
    expect(total.data).toHaveLength(1);

    // An export in flight too: neither it nor its requests made again at the restart may bring anything back.
    expect((await call(first, user, 'POST', '/api/data/export', {})).status).toBe(201);
    const erased = await call(first, user, 'DELETE', '/api/data');
    expect(erased.status).toBe(202);
    erasureId = ((await erased.json()) as { erasureId: string }).erasureId;
  } finally {
    first.child.kill('SIGKILL');
    await first.exited;
  }
  // Killed before the erasure completed (else this test would prove nothing).
  expect(first.output('stdout')).not.toContain('erasure completed');

  const restartedAt = Date.now();
  const second = await startEmbedded();
  try {
    const status = async () => (await (await call(second, user, 'GET', `/api/data/erasure/${erasureId}`)).json()) as { status: string };
    // A start does not wait for the erasure it resumed: the system answers, and says it is UP, while it runs.
    const health = await fetch(`${baseOf(second)}/health/`, { signal: AbortSignal.timeout(2000) });
    const upAfterMs = Date.now() - restartedAt;
    expect(health.status).toBe(200);
    process.stderr.write(`UP ${upAfterMs} ms after the restart began\n`);
    // Health is asked every 100 ms while the erasure runs: each answer comes at once (the attacker saw every one fail
    // for 17 s: the resumed erasure held the event loop).
    let slowestHealthMs = 0;
    // The user's reads meanwhile: held (409 erasure-pending: the re-published request reached the gateway) or, once the
    // erasure completed, empty; never a half-erased history.
    const reads = new Set<string>();
    await waitUntil(
      async () => {
        const asked = performance.now();
        expect((await fetch(`${baseOf(second)}/health/`)).status).toBe(200);
        slowestHealthMs = Math.max(slowestHealthMs, performance.now() - asked);
        const read = await call(second, user, 'GET', '/api/history/v2?with_deleted=true&limit=1');
        const body = (await read.json()) as { type?: string; total?: number };
        reads.add(read.status === 200 ? `200 total=${body.total}` : `${read.status} ${body.type}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
        return (await status()).status === 'completed';
      },
      60_000,
      'the erasure completed after the restart',
    );
    process.stderr.write(
      `[erasure-crash] health_max_ms=${Math.round(slowestHealthMs)} (the slowest /health/ answer during the resumed ` +
        `erasure; target: health_max_ms < 1000)\n`,
    );
    expect([...reads].filter((r) => r !== '409 https://problems.udp.example/erasure-pending' && r !== '200 total=0')).toEqual([]);
    // Every answer came, none after a stall of seconds (the resumed erasure held the event loop for 17 s); the target
    // is printed above: a loaded machine moves it, not this.
    expect(slowestHealthMs).toBeLessThan(5000);
    process.stderr.write(`erasure of ${ENTRIES} history entries completed ${Date.now() - restartedAt} ms after the restart began\n`);

    expect(((await (await call(second, user, 'GET', '/api/history/v2?with_deleted=true')).json()) as { data: unknown[] }).data).toEqual([]);
    expect(await (await call(second, user, 'GET', '/api/preference')).json()).toEqual([]);
    const playlists = (await (await call(second, user, 'GET', '/api/playlist/v3/watch_later')).json()) as { bookmarks?: unknown[] };
    expect(playlists.bookmarks ?? []).toEqual([]);
    expect(await (await call(second, user, 'GET', '/api/data/export')).json()).toEqual([]);
    expect(((await (await call(second, bystander, 'GET', '/api/history/v2')).json()) as { data: unknown[] }).data).toHaveLength(10);
  } finally {
    await second.stop();
  }
  // The profile is left out above: reading it would create a new one (the user's own request).
  const exportsDir = join(dataDir, 'exports');
  expect(existsSync(exportsDir) ? readdirSync(exportsDir) : []).toEqual([]);
  expect(bytesFoundUnder(dataDir, [user])).toEqual([]);
});
