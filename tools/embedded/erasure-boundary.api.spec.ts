import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChangeEvent, serverSentEvents } from '@udp/api-client';
import { fileSecret, signDevToken } from '@udp/auth';
import { waitUntil } from '@udp/test-kit';
import { start } from './host';

/**
 * The erasure as one moment (docs/erasure.md, "The erasure boundary"; docs/live-sync.md), through the public API of
 * the embedded system: while a user's erasure runs, their requests are refused (409 erasure-pending) and none of their
 * streams sends anything erased; afterwards a cursor of before it answers `erasure`, never a partial replay; a resume
 * reaches back only so far; what was acknowledged is what the log rebuilds.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'udp-erasure-boundary-'));
const env = {
  DATA_DIR: dataDir,
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'silent',
  RATE_LIMIT_PER_USER: '1000000',
  RATE_LIMIT_PER_ADDRESS: '1000000',
  CHANGES_MAX_CATCHUP: '1000',
};
let system: Awaited<ReturnType<typeof start>> | undefined;
let base = '';
const boot = async () => {
  system = await start(env, { announce: false });
  base = `http://127.0.0.1:${system.port}`;
};
beforeAll(boot, 60_000);
afterAll(async () => {
  await system?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const auth = async (user: string) => `Bearer ${await signDevToken(fileSecret(dataDir, 'jwt-signing'), user)}`;

const send = async (user: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, {
    method,
    headers: { authorization: await auth(user), ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const list = async (user: string) => {
  const answer = await send(user, 'GET', '/api/history/v2?with_deleted=true&limit=1000');
  expect(answer.status).toBe(200);
  return ((await answer.json()) as { data: Array<{ item_id: string; id: number }> }).data;
};

/** `entries` history entries of the user, written in batches of 5,000 (the batch route's maximum). */
async function seed(user: string, entries: number, prefix = 'old'): Promise<void> {
  for (let from = 0; from < entries; from += 5000) {
    const items = Array.from({ length: Math.min(5000, entries - from) }, (_, i) => ({
      item_id: `urn:${prefix}:${from + i}`,
      last_playback_position: 1,
      date: 1_700_000_000_000 + from + i,
    }));
    const answer = await send(user, 'POST', '/api/history/v2/batch', { data: items });
    expect(answer.status).toBeLessThan(300);
  }
}

/** Starts `DELETE /api/data` and resolves once it is over (a 202 is followed to its completion). */
function erase(user: string): { done: Promise<void>; over: () => boolean } {
  let over = false;
  const done = (async () => {
    const answer = await send(user, 'DELETE', '/api/data');
    if (answer.status === 202) {
      const status = `${new URL(answer.headers.get('location')!, base).pathname}`;
      await waitUntil(
        async () => ((await (await send(user, 'GET', status)).json()) as { status: string }).status === 'completed',
        30_000,
        'the erasure to complete',
      );
    } else expect(answer.status).toBe(204);
    over = true;
  })();
  return { done, over: () => over };
}

/** A stream opened and read to its end, or (when it is open and caught up) to its `ready`; at most `limit` events. */
async function openAndRead(
  user: string,
  options: { lastEventId?: string; query?: string; ticket?: string } = {},
  limit = 5000,
): Promise<{ status: number; problemType?: string; retryAfter?: string | null; events: ChangeEvent[]; ended: boolean }> {
  const abort = new AbortController();
  const query = new URLSearchParams(options.query ?? '');
  if (options.ticket !== undefined) query.set('ticket', options.ticket);
  const response = await fetch(`${base}/api/changes?${query}`, {
    headers: {
      accept: 'text/event-stream',
      ...(options.ticket === undefined && { authorization: await auth(user) }),
      ...(options.lastEventId !== undefined && { 'last-event-id': options.lastEventId }),
    },
    signal: abort.signal,
  });
  if (response.status !== 200) {
    const problem = (await response.json()) as { type: string };
    return { status: response.status, problemType: problem.type, retryAfter: response.headers.get('retry-after'), events: [], ended: true };
  }
  const read: ChangeEvent[] = [];
  let ended = true;
  for await (const e of serverSentEvents(response.body!)) {
    read.push({ event: e.event, ...(e.id !== undefined && { id: e.id }), data: JSON.parse(e.data) } as ChangeEvent);
    if (e.event === 'ready' || read.length >= limit) {
      ended = false;
      break;
    }
  }
  abort.abort();
  return { status: response.status, events: read, ended };
}

const readyCursor = async (user: string) => {
  const opened = await openAndRead(user);
  expect(opened.events.at(-1)?.event).toBe('ready');
  return opened.events.at(-1)!.id!;
};

const ERASURE_PENDING = 'https://problems.udp.example/erasure-pending';

describe('the erasure boundary', () => {
  it('refuses every request of the user while the erasure runs, and a stream reopened meanwhile sends nothing erased', async () => {
    await seed('erin', 20_000);
    const before = await readyCursor('erin');
    const erasing = erase('erin');
    // The hold is on from the request's arrival: wait until it shows (the erasure of 20,000 entries takes a while).
    await waitUntil(async () => (await send('erin', 'GET', '/api/history/v2')).status === 409, 5000, 'the hold');
    let reopened = 0;
    const written: Array<{ item: string; status: number }> = [];
    while (!erasing.over()) {
      for (const options of [{ lastEventId: before }, {}]) {
        const stream = await openAndRead('erin', options);
        reopened++;
        // Refused, or `erasure` and the end; or, opened without a cursor once the erasure is over, `ready` and nothing.
        expect(stream.events.filter((e) => e.event !== 'erasure' && e.event !== 'ready')).toEqual([]);
        if (stream.status === 200) expect(stream.ended || stream.events.map((e) => e.event).join() === 'ready').toBe(true);
        else expect(stream).toMatchObject({ status: 409, problemType: ERASURE_PENDING, retryAfter: '2' });
      }
      const item = `urn:during:${written.length}`;
      const write = await send('erin', 'POST', '/api/history/v2', { item_id: item, last_playback_position: 1 });
      written.push({ item, status: write.status });
      if (write.status !== 200) expect(((await write.json()) as { type: string }).type).toBe(ERASURE_PENDING);
    }
    await erasing.done;
    expect(reopened).toBeGreaterThan(0);
    // Afterwards: the old cursor answers `erasure` and ends; a new stream starts from nothing; the history is empty.
    const resumed = await openAndRead('erin', { lastEventId: before });
    expect(resumed.events.map((e) => e.event)).toEqual(['erasure']);
    expect(resumed.ended).toBe(true);
    const fresh = await openAndRead('erin');
    expect(fresh.events.map((e) => e.event)).toEqual(['ready']);
    // Only what was acknowledged is there: the writes answered 200 once the erasure had completed (the test sees its
    // answer a moment after the gateway let the user in again), nothing erased.
    const acknowledged = written.filter((w) => w.status === 200).map((w) => w.item);
    expect((await list('erin')).map((e) => e.item_id).sort()).toEqual(acknowledged.sort());
    expect(written.some((w) => w.status === 409)).toBe(true);
  }, 120_000);

  it('gives a device that was away during the erasure `erasure`, not the changes made since', async () => {
    await seed('otto', 3);
    const before = await readyCursor('otto');
    await erase('otto').done;
    for (let i = 0; i < 10; i++) {
      expect((await send('otto', 'POST', '/api/history/v2', { item_id: `urn:new:${i}`, last_playback_position: 1 })).status).toBe(200);
    }
    const resumed = await openAndRead('otto', { lastEventId: before });
    expect(resumed.events.map((e) => e.event)).toEqual(['erasure']);
    expect(resumed.ended).toBe(true);
    // It drops its cursor and syncs from the API: the ten new entries, all of them.
    expect(await list('otto')).toHaveLength(10);
  }, 60_000);

  it('sends a resume within CHANGES_MAX_CATCHUP what it owes, and one from further back `close` (resync) and no change', async () => {
    const empty = await readyCursor('amos');
    await seed('amos', 600, 'first');
    const within = await openAndRead('amos', { lastEventId: empty });
    expect(within.events.filter((e) => e.event === 'history')).toHaveLength(600);
    expect(within.events.at(-1)?.event).toBe('ready');
    const middle = within.events.at(-1)!.id!;
    await seed('amos', 2000, 'second');
    // 2,000 events after `middle`, 2,600 after `empty`: both beyond the reach of 1,000. Nothing sent but the `close`.
    for (const cursor of [middle, empty]) {
      const resumed = await openAndRead('amos', { lastEventId: cursor });
      expect(resumed.ended).toBe(true);
      expect(resumed.events).toHaveLength(1);
      expect(resumed.events[0]).toMatchObject({ event: 'close', data: { reason: 'resync' } });
    }
  }, 60_000);

  it('spends a ticket only on a stream that opens, and lets the Last-Event-ID header win over the query', async () => {
    const cursor = await readyCursor('tess');
    const { ticket } = (await (await send('tess', 'POST', '/api/changes/ticket')).json()) as { ticket: string };
    const badCursor = await openAndRead('tess', { ticket, query: 'last_event_id=c1.not-a-cursor' });
    expect(badCursor.status).toBe(400);
    // The same ticket opens the stream afterwards.
    const opened = await openAndRead('tess', { ticket });
    expect(opened.events.map((e) => e.event)).toEqual(['ready']);
    // A valid header beside a malformed query: the header wins, the stream opens.
    const header = await openAndRead('tess', { lastEventId: cursor, query: 'last_event_id=%25%25%25' });
    expect(header.status).toBe(200);
    expect(header.events.at(-1)?.event).toBe('ready');
  }, 30_000);

  it('acknowledges during an erasure only what the log keeps: the read models rebuilt from the log are the same', async () => {
    await seed('walt', 20_000);
    const erasing = erase('walt');
    const answers: Array<{ item: string; status: number }> = [];
    while (!erasing.over()) {
      const item = `urn:race:${answers.length}`;
      const write = await send('walt', 'POST', '/api/history/v2', { item_id: item, last_playback_position: 1 });
      answers.push({ item, status: write.status });
      if (write.status === 409) expect(write.headers.get('retry-after')).toBe('2');
    }
    await erasing.done;
    expect(answers.filter((a) => a.status !== 200 && a.status !== 409)).toEqual([]);
    // A write answered 200 before the DELETE arrived went with the erasure; every one answered 200 after a refusal came
    // once the erasure was over, and is listed.
    const firstRefused = answers.findIndex((a) => a.status === 409);
    expect(firstRefused).toBeGreaterThanOrEqual(0);
    const live = await list('walt');
    const listed = new Set(live.map((e) => e.item_id));
    expect(answers.slice(firstRefused).filter((a) => a.status === 200 && !listed.has(a.item))).toEqual([]);
    expect(live.filter((e) => e.item_id.startsWith('urn:old:'))).toEqual([]);
    // The read models rebuilt from the log at a start without them: the same entries, the same ids.
    await system!.stop();
    system = undefined;
    for (const service of ['history-svc']) rmSync(join(dataDir, service, 'read-models.sqlite'), { force: true });
    await boot();
    expect(await list('walt')).toEqual(live);
  }, 180_000);
});
