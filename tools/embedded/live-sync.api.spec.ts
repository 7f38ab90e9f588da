import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChangeEvent, openChangeStream, serverSentEvents } from '@udp/api-client';
import { InternalIdentity, fileSecret, signDevToken } from '@udp/auth';
import { CursorCodec } from '@udp/gateway-core';
import { waitUntil } from '@udp/test-kit';
import { start } from './host';

/**
 * Live sync (issue 29) in the embedded mode: the whole system in this process, devices as real SSE clients over HTTP
 * (libs/api-client's parser over fetch) against the gateway. Changes are made through the public API, as another device.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'udp-live-sync-'));
let system: Awaited<ReturnType<typeof start>>;
let base = '';
const tokens = new Map<string, string>();

beforeAll(async () => {
  system = await start(
    {
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      RATE_LIMIT_PER_USER: '1000000',
      RATE_LIMIT_PER_ADDRESS: '1000000',
      CHANGES_HEARTBEAT_S: '1',
      CHANGES_MAX_STREAMS_PER_USER: '2',
      CHANGES_MAX_STREAMS: '6',
      CHANGES_MAX_BUFFER_BYTES: '65536',
      // A stalled reader resumes 25,000 changes behind (below); a resume's reach is tested in erasure-boundary.api.spec.ts.
      CHANGES_MAX_CATCHUP: '100000',
    },
    { announce: false },
  );
  base = `http://127.0.0.1:${system.port}`;
}, 60_000);
afterAll(async () => {
  await system?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function auth(user: string): Promise<string> {
  if (!tokens.has(user)) tokens.set(user, `Bearer ${await signDevToken(fileSecret(dataDir, 'jwt-signing'), user)}`);
  return tokens.get(user)!;
}

const call = async (user: string, method: string, path: string, body?: unknown) => {
  const answer = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: await auth(user), ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${await answer.text()}`);
  return answer.status === 204 ? undefined : answer.json();
};

/** A device: one open stream, its events collected as they come. */
class Device {
  readonly events: ChangeEvent[] = [];
  ended = false;
  private readonly abort = new AbortController();

  /** `readyTimeoutMs`: `ready` follows what a resume owes, so a resume owing thousands of changes waits longer for it. */
  static async open(user: string, options: { lastEventId?: string; ticket?: string; readyTimeoutMs?: number } = {}): Promise<Device> {
    const device = new Device();
    const { readyTimeoutMs = 5000, ...asked } = options;
    const { response, events, problem } = await openChangeStream(base, {
      ...(asked.ticket === undefined && { authorization: await auth(user) }),
      ...asked,
      signal: device.abort.signal,
    });
    if (problem) throw new Error(`stream refused: ${response.status} ${JSON.stringify(problem)}`);
    void (async () => {
      try {
        for await (const event of events) device.events.push(event);
      } catch {
        // aborted by the test
      }
      device.ended = true;
    })();
    await device.until((e) => e.some((x) => x.event === 'ready'), 'ready', readyTimeoutMs);
    return device;
  }

  of<N extends ChangeEvent['event']>(name: N): Array<Extract<ChangeEvent, { event: N }>> {
    return this.events.filter((e): e is Extract<ChangeEvent, { event: N }> => e.event === name);
  }

  /** The id of the last event that had one: where a reconnect resumes. */
  get lastId(): string {
    return this.events.filter((e) => e.id !== undefined).at(-1)!.id!;
  }

  until(condition: (events: ChangeEvent[]) => boolean, what: string, timeoutMs = 5000): Promise<void> {
    return waitUntil(() => condition(this.events), timeoutMs, what);
  }

  async close(): Promise<void> {
    this.abort.abort();
    await waitUntil(() => this.ended, 2000, 'the stream to end');
  }
}

const refusal = async (headers: Record<string, string>, query = '') => {
  const answer = await fetch(`${base}/api/changes${query}`, { headers });
  return { status: answer.status, type: answer.headers.get('content-type'), body: (await answer.json()) as { detail: string } };
};

/** A cursor as the gateway sealed it before preference and profile events (its MAC as cursor.ts makes it). */
function oldCursor(userId: string, history: string, playlist: number): string {
  const key = new InternalIdentity(fileSecret(dataDir, 'internal-identity')).derivedKey('changes-cursor');
  const payload = Buffer.from(JSON.stringify({ h: history, p: playlist }), 'utf8');
  const mac = createHmac('sha256', key).update(`${userId.length}:${userId}`).update(payload).digest().subarray(0, 16);
  return `c1.${Buffer.concat([mac, payload]).toString('base64url')}`;
}

describe('GET /api/changes', () => {
  it("pushes a change made on one device to the user's other device, as GET /api/history/v2 shows it", async () => {
    const tv = await Device.open('alice');
    const written = (await call('alice', 'POST', '/api/history/v2', {
      item_id: 'urn:a:1',
      last_playback_position: 42,
      device_id: 'phone',
    })) as {
      item_id: string;
    };
    await tv.until((e) => e.some((x) => x.event === 'history'), 'the change');
    const listed = (await call('alice', 'GET', '/api/history/v2?with_deleted=true')) as { data: unknown[] };
    expect(tv.of('history').map((e) => e.data)).toEqual([listed.data[0]]);
    expect(tv.of('history')[0].data).toMatchObject({
      item_id: written.item_id,
      last_playback_position: 42,
      device_id: 'phone',
      deleted: false,
    });
    // A deletion is a tombstone, as with_deleted=true lists it.
    await call('alice', 'DELETE', '/api/history/v2/urn%3Aa%3A1');
    await tv.until((e) => e.filter((x) => x.event === 'history').length === 2, 'the tombstone');
    expect(tv.of('history')[1].data).toMatchObject({ item_id: 'urn:a:1', deleted: true });
    await tv.close();
  });

  it('reaches the other device, every change in turn (its latency printed; target: p99 under 200 ms)', async () => {
    const tv = await Device.open('quinn');
    const ms: number[] = [];
    for (let i = 0; i < 200; i++) {
      const sent = performance.now();
      await call('quinn', 'POST', '/api/history/v2', { item_id: `p${i}`, last_playback_position: i });
      await tv.until((e) => e.filter((x) => x.event === 'history').length === i + 1, `change ${i}`);
      ms.push(performance.now() - sent);
    }
    ms.sort((a, b) => a - b);
    const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))].toFixed(1);
    // From the write's request to the event at the other device: the write's own answer is inside it.
    process.stderr.write(
      `[live-sync] changes=200 p50_ms=${at(0.5)} p99_ms=${at(0.99)} max_ms=${at(1)} (write to another device's event; ` +
        `target: p99_ms < 200)\n`,
    );
    // What holds on any machine, busy or not: every change arrived, none after a stall of seconds. The target is
    // printed above (docs/live-sync.md's figure): a loaded machine moves it, not this.
    expect(Number(at(1))).toBeLessThan(5000);
    await tv.close();
  });

  it("never carries another user's change", async () => {
    const bobsTv = await Device.open('bob');
    const carolsTv = await Device.open('carol');
    // Alice's changes first: were they sent to bob, they would come before bob's own.
    await call('alice', 'POST', '/api/history/v2', { item_id: 'urn:alice:secret', last_playback_position: 1 });
    await call('alice', 'POST', '/api/playlist/v3/watch_later/bookmarks', { itemId: 'urn:alice:secret' });
    await call('alice', 'PUT', '/api/preference/alice-secret', { pin: 1234 });
    await call('alice', 'DELETE', '/api/preference/alice-secret');
    await call('alice', 'PUT', '/api/profile/v3', { displayName: 'Alice Secret' });
    await call('bob', 'POST', '/api/history/v2', { item_id: 'urn:bob:1', last_playback_position: 2 });
    await bobsTv.until((e) => e.some((x) => x.event === 'history'), "bob's change");
    await call('carol', 'POST', '/api/history/v2', { item_id: 'urn:carol:1', last_playback_position: 3 });
    await carolsTv.until((e) => e.some((x) => x.event === 'history'), "carol's change");
    expect(bobsTv.of('history').map((e) => e.data.item_id)).toEqual(['urn:bob:1']);
    expect(carolsTv.of('history').map((e) => e.data.item_id)).toEqual(['urn:carol:1']);
    expect(bobsTv.of('playlist')).toHaveLength(0);
    expect(carolsTv.of('playlist')).toHaveLength(0);
    // Bob's own preference and profile come after alice's: alice's would have come first.
    await call('bob', 'PUT', '/api/preference/bob-own', { x: 1 });
    await call('bob', 'PUT', '/api/profile/v3', { displayName: 'Bob' });
    await bobsTv.until((e) => e.some((x) => x.event === 'preference') && e.some((x) => x.event === 'profile'), "bob's own");
    expect(bobsTv.of('preference').map((e) => e.data.key)).toEqual(['bob-own']);
    expect(bobsTv.of('profile').map((e) => e.data.displayName)).toEqual(['Bob']);
    expect(carolsTv.of('preference')).toHaveLength(0);
    expect(carolsTv.of('profile')).toHaveLength(0);
    expect(JSON.stringify([bobsTv.events, carolsTv.events])).not.toMatch(/alice|1234/i);
    await bobsTv.close();
    await carolsTv.close();
  });

  it('a device away while 100 changes happen resumes by Last-Event-ID and receives exactly those 100', async () => {
    const phone = await Device.open('dave');
    await call('dave', 'POST', '/api/history/v2/batch', {
      data: Array.from({ length: 10 }, (_, i) => ({ item_id: `d${i}`, last_playback_position: i })),
    });
    await phone.until((e) => e.filter((x) => x.event === 'history').length === 10, 'the changes before');
    const resumeFrom = phone.lastId;
    await phone.close();
    // 100 changes while it is away: 60 entries in one batch, 30 single writes, 10 deletions of entries it had seen.
    await call('dave', 'POST', '/api/history/v2/batch', {
      data: Array.from({ length: 60 }, (_, i) => ({ item_id: `b${i}`, last_playback_position: i })),
    });
    for (let i = 0; i < 30; i++) await call('dave', 'POST', '/api/history/v2', { item_id: `s${i}`, last_playback_position: 1000 + i });
    for (let i = 0; i < 10; i++) await call('dave', 'DELETE', `/api/history/v2/d${i}`);
    const back = await Device.open('dave', { lastEventId: resumeFrom });
    const received = back.of('history').map((e) => e.data);
    expect(received.map((d) => d.item_id)).toEqual([
      ...Array.from({ length: 60 }, (_, i) => `b${i}`),
      ...Array.from({ length: 30 }, (_, i) => `s${i}`),
      ...Array.from({ length: 10 }, (_, i) => `d${i}`),
    ]);
    // Each as GET /api/history/v2 shows it now, tombstones included.
    const listed = (await call('dave', 'GET', '/api/history/v2?with_deleted=true&limit=1000')) as { data: Array<{ item_id: string }> };
    const byId = new Map(listed.data.map((d) => [d.item_id, d]));
    for (const entry of received) expect(entry).toEqual(byId.get(entry.item_id));
    expect(received.filter((d) => d.deleted).map((d) => d.item_id)).toEqual(Array.from({ length: 10 }, (_, i) => `d${i}`));
    // Nothing before the cursor; `ready` comes after what the resume owed.
    expect(back.events.at(-1)!.event).toBe('ready');
    // Resuming from each event's own id gives exactly what followed it; an entry changed twice meanwhile comes once.
    const middle = back.of('history')[39];
    await call('dave', 'POST', '/api/history/v2', { item_id: 'b50', last_playback_position: 5000 });
    const again = await Device.open('dave', { lastEventId: middle.id });
    const rest = received.slice(40).map((d) => d.item_id);
    expect(again.of('history').map((e) => e.data.item_id)).toEqual([...rest.filter((id) => id !== 'b50'), 'b50']);
    await again.close();
    await back.close();
  });

  it('pushes playlist changes in their v3 shape, deletions included, and resumes them exactly once', async () => {
    const tv = await Device.open('rita');
    await call('rita', 'POST', '/api/playlist/v3/watch_later/bookmarks', { itemId: 'urn:wl:1' });
    // The first bookmark creates the watch-later list, then adds to it: two changes, and a stream that pulls between
    // them (in process, a pull is that quick) sends each; the last is the list as GET shows it.
    const bookmarked = (x: { event: string; data: unknown }) =>
      x.event === 'playlist' && (x.data as { bookmarks: unknown[] }).bookmarks.length === 1;
    await tv.until((e) => e.some(bookmarked), 'the watch-later change');
    const shown = await call('rita', 'GET', '/api/playlist/v3/watch_later');
    expect(tv.of('playlist').at(-1)!.data).toEqual({ ...(shown as object), deleted: false });
    const resumeFrom = tv.lastId;
    await tv.close();
    // While it is away: a playlist created with a bookmark, renamed, and another created then deleted; a history change.
    await call('rita', 'POST', '/api/playlist/v3/new/bookmarks', { businessId: 'kids', itemId: 'urn:k:1', name: 'Kids' });
    await call('rita', 'POST', '/api/playlist/v3/kids', { name: 'Children' });
    await call('rita', 'POST', '/api/playlist/v3/gone', { name: 'Gone' });
    await call('rita', 'DELETE', '/api/playlist/v3/gone');
    await call('rita', 'POST', '/api/history/v2', { item_id: 'urn:h:1', last_playback_position: 3 });
    const back = await Device.open('rita', { lastEventId: resumeFrom });
    const playlists = back.of('playlist').map((e) => e.data);
    // Each playlist once, in its state now, in the order of its last change.
    expect(playlists).toEqual([
      { ...((await call('rita', 'GET', '/api/playlist/v3/kids')) as object), deleted: false },
      { id: expect.any(String), businessId: 'gone', deleted: true },
    ]);
    expect(back.of('history').map((e) => e.data.item_id)).toEqual(['urn:h:1']);
    const again = await Device.open('rita', { lastEventId: back.of('playlist')[0].id });
    expect(again.of('playlist').map((e) => e.data.businessId)).toEqual(['gone']);
    expect(again.of('history')).toHaveLength(0);
    await again.close();
    await back.close();
  });

  it('pushes a preference set, changed and deleted on one device to the other, as GET /api/preference/{key} shows it', async () => {
    const tv = await Device.open('pia');
    const preferences = () => tv.of('preference').map((e) => e.data);
    await call('pia', 'PUT', '/api/preference/player', { volume: 3, subtitles: { lang: 'fr' } });
    await tv.until((e) => e.some((x) => x.event === 'preference'), 'the set');
    expect(preferences()).toEqual([{ key: 'player', document: await call('pia', 'GET', '/api/preference/player'), deleted: false }]);
    // A change of a part is sent as the whole document, as GET shows it.
    await call('pia', 'PUT', '/api/preference/player/subtitles/lang', 'de');
    await tv.until((e) => e.filter((x) => x.event === 'preference').length === 2, 'the change');
    expect(preferences()[1]).toEqual({ key: 'player', document: { volume: 3, subtitles: { lang: 'de' } }, deleted: false });
    expect(preferences()[1]).toEqual({ key: 'player', document: await call('pia', 'GET', '/api/preference/player'), deleted: false });
    await call('pia', 'DELETE', '/api/preference/player');
    await tv.until((e) => e.filter((x) => x.event === 'preference').length === 3, 'the deletion');
    expect(preferences()[2]).toEqual({ key: 'player', deleted: true });
    // A key with a slash in it, as the API names it.
    await call('pia', 'PUT', '/api/preference/app%2Fsettings', { theme: 'dark' });
    await tv.until((e) => e.filter((x) => x.event === 'preference').length === 4, 'the other key');
    expect(preferences()[3]).toEqual({ key: 'app/settings', document: { theme: 'dark' }, deleted: false });
    expect(tv.of('history')).toHaveLength(0);
    await tv.close();
  });

  it('pushes a profile change, as GET /api/profile/v3 shows it (its creation by the first read included)', async () => {
    const tv = await Device.open('ravi');
    const created = await call('ravi', 'GET', '/api/profile/v3');
    await tv.until((e) => e.some((x) => x.event === 'profile'), 'the creation');
    expect(tv.of('profile')[0].data).toEqual(created);
    const updated = await call('ravi', 'PUT', '/api/profile/v3', { displayName: 'Ravi', language: 'en' });
    await tv.until((e) => e.filter((x) => x.event === 'profile').length === 2, 'the change');
    expect(tv.of('profile')[1].data).toEqual(updated);
    expect(tv.of('profile')[1].data).toEqual(await call('ravi', 'GET', '/api/profile/v3'));
    await tv.close();
  });

  it('a device away while 40 preference changes happen resumes by Last-Event-ID and receives exactly those, once', async () => {
    const phone = await Device.open('sara');
    await call('sara', 'PUT', '/api/preference/seen', { v: 0 });
    await phone.until((e) => e.some((x) => x.event === 'preference'), 'the change before');
    const resumeFrom = phone.lastId;
    await phone.close();
    // 40 changes of 40 keys while it is away: 30 keys set, 9 of the others' changed, and the key it had seen deleted.
    for (let i = 0; i < 30; i++) await call('sara', 'PUT', `/api/preference/k${i}`, { i });
    for (let i = 0; i < 9; i++) await call('sara', 'PUT', `/api/preference/c${i}`, { c: i });
    await call('sara', 'DELETE', '/api/preference/seen');
    const back = await Device.open('sara', { lastEventId: resumeFrom });
    const received = back.of('preference').map((e) => e.data);
    expect(received.map((d) => d.key)).toEqual([
      ...Array.from({ length: 30 }, (_, i) => `k${i}`),
      ...Array.from({ length: 9 }, (_, i) => `c${i}`),
      'seen',
    ]);
    for (const change of received.slice(0, -1)) {
      expect(change).toEqual({ key: change.key, document: await call('sara', 'GET', `/api/preference/${change.key}`), deleted: false });
    }
    expect(received.at(-1)).toEqual({ key: 'seen', deleted: true });
    // Nothing before the cursor; `ready` after what the resume owed; every event its own cursor.
    expect(back.events.at(-1)!.event).toBe('ready');
    expect(new Set(back.of('preference').map((e) => e.id)).size).toBe(40);
    // From a middle event's id: exactly what followed it; a key changed twice meanwhile comes once, at its last change.
    await call('sara', 'PUT', '/api/preference/k25', { i: 'again' });
    await call('sara', 'PUT', '/api/preference/k25', { i: 'last' });
    const again = await Device.open('sara', { lastEventId: back.of('preference')[19].id });
    const rest = received.slice(20).map((d) => d.key);
    expect(again.of('preference').map((e) => e.data.key)).toEqual([...rest.filter((key) => key !== 'k25'), 'k25']);
    expect(again.of('preference').at(-1)!.data).toEqual({ key: 'k25', document: { i: 'last' }, deleted: false });
    // And from the end: nothing.
    const caughtUp = await Device.open('sara', { lastEventId: again.lastId });
    expect(caughtUp.of('preference')).toHaveLength(0);
    await caughtUp.close();
    await again.close();
    await back.close();
  });

  it('accepts a cursor issued before preference and profile events: it gets them from their beginning, then exactly once', async () => {
    const user = 'uma';
    await call(user, 'PUT', '/api/preference/older', { kept: 1 });
    await call(user, 'PUT', '/api/profile/v3', { displayName: 'Uma' });
    await call(user, 'POST', '/api/history/v2', { item_id: 'h-before', last_playback_position: 1 });
    const tv = await Device.open(user);
    const codec = new CursorCodec(new InternalIdentity(fileSecret(dataDir, 'internal-identity')).derivedKey('changes-cursor'));
    const now = codec.decode(user, tv.lastId, 'Last-Event-ID');
    await tv.close();
    // As the gateway of before sealed it: the history and playlist positions only.
    const old = oldCursor(user, now.history, now.playlist);
    expect(codec.decode(user, old, 'Last-Event-ID')).toEqual({ ...now, preference: '0', profile: 0 });
    await call(user, 'POST', '/api/history/v2', { item_id: 'h-after', last_playback_position: 2 });
    await call(user, 'PUT', '/api/preference/newer', { v: 2 });
    const back = await Device.open(user, { lastEventId: old });
    // History from its position, as before; preferences and the profile from their beginning: each once, as now.
    expect(back.of('history').map((e) => e.data.item_id)).toEqual(['h-after']);
    expect(back.of('preference').map((e) => e.data)).toEqual([
      { key: 'older', document: { kept: 1 }, deleted: false },
      { key: 'newer', document: { v: 2 }, deleted: false },
    ]);
    expect(back.of('profile').map((e) => e.data)).toEqual([await call(user, 'GET', '/api/profile/v3')]);
    // Its ids are cursors of the new form: a resume from the last gives nothing again.
    const again = await Device.open(user, { lastEventId: back.lastId });
    expect(again.events.map((e) => e.event)).toEqual(['ready']);
    await again.close();
    await back.close();
    // An old cursor is still its user's only.
    expect((await refusal({ authorization: await auth('not-uma'), 'last-event-id': old })).status).toBe(400);
  });

  it('refuses a foreign, altered or malformed cursor with 400 before the stream starts', async () => {
    const erin = await Device.open('erin');
    await call('erin', 'POST', '/api/history/v2', { item_id: 'x', last_playback_position: 1 });
    await erin.until((e) => e.some((x) => x.event === 'history'), 'the change');
    const erinsCursor = erin.lastId;
    await erin.close();
    const foreign = await refusal({ authorization: await auth('frank'), 'last-event-id': erinsCursor });
    expect(foreign).toMatchObject({ status: 400, type: expect.stringContaining('application/problem+json') });
    expect(foreign.body.detail).toMatch(/Last-Event-ID is not a cursor of this user/);
    const altered = erinsCursor.slice(0, -2) + (erinsCursor.endsWith('A') ? 'BB' : 'AA');
    expect((await refusal({ authorization: await auth('erin'), 'last-event-id': altered })).status).toBe(400);
    expect((await refusal({ authorization: await auth('erin') }, '?last_event_id=nonsense')).status).toBe(400);
    expect((await refusal({})).status).toBe(401);
  });

  it('accepts a ticket once, for its user only; a replayed or made-up one is 401', async () => {
    const { ticket, expires_in } = (await call('gina', 'POST', '/api/changes/ticket')) as { ticket: string; expires_in: number };
    expect(expires_in).toBe(30);
    const browser = await Device.open('nobody', { ticket });
    await call('gina', 'POST', '/api/history/v2', { item_id: 'g', last_playback_position: 1 });
    await browser.until((e) => e.some((x) => x.event === 'history'), "gina's change");
    expect(browser.of('history')[0].data.item_id).toBe('g');
    await browser.close();
    const replayed = await refusal({}, `?ticket=${ticket}`);
    expect(replayed.status).toBe(401);
    expect(replayed.body.detail).toMatch(/already used/);
    // Expiry is tested with an injected clock: libs/gateway-core/src/changes/tickets.api.spec.ts.
    expect((await refusal({}, `?ticket=${'A'.repeat(40)}`)).status).toBe(401);
  });

  it('sends heartbeat comments', async () => {
    const answer = await fetch(`${base}/api/changes`, { headers: { authorization: await auth('hal') } });
    const reader = answer.body!.getReader();
    let text = '';
    while (!text.includes('\n:\n')) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
  });

  it("ends a user's oldest stream past CHANGES_MAX_STREAMS_PER_USER with a close event, and refuses past CHANGES_MAX_STREAMS", async () => {
    const first = await Device.open('ivy');
    const second = await Device.open('ivy');
    const third = await Device.open('ivy');
    await first.until((e) => e.some((x) => x.event === 'close'), 'the close of the oldest');
    expect(first.of('close')[0].data.reason).toBe('replaced');
    await waitUntil(() => first.ended, 2000, 'the oldest stream to end');
    expect(second.of('close')).toHaveLength(0);
    const others = [await Device.open('jo'), await Device.open('kim'), await Device.open('lee'), await Device.open('max')];
    const over = await refusal({ authorization: await auth('ned') });
    expect(over.status).toBe(503);
    expect(over.body.detail).toMatch(/CHANGES_MAX_STREAMS/);
    for (const device of [second, third, ...others]) await device.close();
  });

  it('closes a reader that takes nothing once CHANGES_MAX_BUFFER_BYTES is unread; it resumes by Last-Event-ID and misses nothing', async () => {
    const user = 'slow-sam';
    // A reader that reads its head and `ready`, then stops reading: what the server writes piles up in its buffer.
    const chunks: Buffer[] = [];
    let ended = false;
    const authorization = await auth(user);
    const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
      http.get(`${base}/api/changes`, { headers: { authorization: authorization } }, resolve).on('error', reject);
    });
    expect(response.statusCode).toBe(200);
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.on('end', () => (ended = true));
    response.on('error', () => (ended = true));
    response.on('aborted', () => (ended = true));
    await waitUntil(() => Buffer.concat(chunks).includes('event: ready'), 5000, 'ready');
    response.pause();
    const keeping = await Device.open(user);
    // 25,000 changes of about 400 bytes on the wire: past the kernel's socket buffers, then past the server's bound.
    const total = 25_000;
    for (let b = 0; b < total / 5000; b++) {
      const data = Array.from({ length: 5000 }, (_, i) => ({ item_id: `${'x'.repeat(150)}-${b * 5000 + i}`, last_playback_position: i }));
      await call(user, 'POST', '/api/history/v2/batch', { data });
    }
    // The other device has every change: the stalled one's pulls ran with it.
    await keeping.until((e) => e.filter((x) => x.event === 'history').length === total, 'every change at the reading device', 60_000);
    response.resume();
    await waitUntil(() => ended, 15_000, 'the stalled stream to be ended by the server');
    const events: Array<{ event: string; id?: string; data: string }> = [];
    const body = Buffer.concat(chunks);
    const afterHead = body.subarray(body.indexOf('retry: 2000'));
    for await (const e of serverSentEvents(new Blob([afterHead]).stream())) events.push(e);
    const history = events.filter((e) => e.event === 'history');
    expect(history.length).toBeLessThan(total);
    const close = events.find((e) => e.event === 'close');
    if (close) expect(JSON.parse(close.data)).toMatchObject({ reason: 'slow-reader' });
    // Resumed from the last event it got whole: exactly the rest, some 18,000 changes sent before `ready` (3-4 s with
    // both cores loaded; a short resume's 5 s ran out once in the whole suite so).
    const resumed = await Device.open(user, {
      lastEventId: [...events].reverse().find((e) => e.id !== undefined)!.id,
      readyTimeoutMs: 60_000,
    });
    const got = [
      ...history.map((e) => (JSON.parse(e.data) as { item_id: string }).item_id),
      ...resumed.of('history').map((e) => e.data.item_id),
    ];
    expect(got).toHaveLength(total);
    expect(new Set(got).size).toBe(total);
    await resumed.close();
    await keeping.close();
    // 25,000 changes written and read twice: 30-40 s with both cores loaded, 98 s seen with more load beside them.
  }, 300_000);

  it("ends the user's streams with an erasure event, and an old cursor then gives nothing of the erased data", async () => {
    const tv = await Device.open('olga');
    await call('olga', 'POST', '/api/history/v2', { item_id: 'erased-1', last_playback_position: 1 });
    await call('olga', 'PUT', '/api/preference/erased-key', { erased: 'value' });
    await call('olga', 'PUT', '/api/profile/v3', { displayName: 'Erased Name' });
    await tv.until((e) => ['history', 'preference', 'profile'].every((n) => e.some((x) => x.event === n)), 'the changes');
    const before = tv.of('ready')[0].id;
    await call('olga', 'DELETE', '/api/data');
    await tv.until((e) => e.some((x) => x.event === 'erasure'), 'the erasure event');
    await waitUntil(() => tv.ended, 2000, 'the stream to end');
    expect(tv.events.at(-1)!.event).toBe('erasure');
    await waitUntil(
      async () => ((await call('olga', 'GET', '/api/history/v2?with_deleted=true')) as { total: number }).total === 0,
      10_000,
      'the erasure',
    );
    // The old cursor is of the epoch before the erasure: `erasure` again, and the end; nothing of the erased data.
    const { events } = await openChangeStream(base, { authorization: await auth('olga'), lastEventId: before });
    const resumed: ChangeEvent[] = [];
    for await (const event of events) resumed.push(event);
    expect(resumed.map((e) => e.event)).toEqual(['erasure']);
  });

  it('ends open streams with a close event when the gateway stops', async () => {
    const tv = await Device.open('pat');
    await system.stop();
    await waitUntil(() => tv.ended, 5000, 'the stream to end');
    expect(tv.events.at(-1)).toMatchObject({ event: 'close', data: { reason: 'shutdown' } });
    system = undefined as never;
  });
});
