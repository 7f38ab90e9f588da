import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EventStore, MemoryEventStore, SqliteEventStore } from '@udp/eventstore';
import { racingStore, startTestSystem, type TestSystem } from '@udp/test-system';
import { createPreferenceService } from '../app';
import { preferenceQuotaStreamId, preferenceStreamId } from '../domain/aggregate';
import { P, jsonRequest } from '../testing/preference-system';

/**
 * Issue 27, defect 5: 100 parallel 256 KiB PUTs of new keys stored 24.6 MB against a 4 MiB quota, and 320 parallel
 * small ones 316 keys against 256: each write checked the usage of the other keys in the read model, which none of
 * the writes in flight had reached yet. A quota must hold exactly whatever the concurrency: every write that grows a
 * user's data passes the user's quota stream at its expected revision. Small quotas here, the same race.
 */
let system: TestSystem;
let cleanup = () => undefined as void;
afterEach(async () => {
  await system?.stop();
  cleanup();
});

/**
 * The service on `store`, its first `writers` stream reads held until all of them have read (racingStore): every
 * writer decides before any has appended, as parallel writers on a networked store (or replicas) do.
 */
async function start(inner: EventStore, writers: number, limits: { maxKeys?: number; maxUserBytes?: number }) {
  const store = racingStore(inner, writers);
  system = await startTestSystem([
    { prefixes: [P], adapters: { store }, create: (deps) => createPreferenceService({ ...deps, limits, writesSideBySide: true }) },
  ]);
  return system.auth('alice');
}
function sqliteStore(): EventStore {
  const dir = mkdtempSync(join(tmpdir(), 'preference-quota-'));
  cleanup = () => rmSync(dir, { recursive: true, force: true });
  return new SqliteEventStore(join(dir, 'events.sqlite'));
}

const put = jsonRequest(() => system, 'put');
/** `{"t":"xxx…"}` of exactly `bytes` bytes of JSON text (8 around the text). */
const text = (bytes: number) => ({ t: 'x'.repeat(bytes - 8) });

/** `writers` PUTs of new keys at once: the keys each answer was given, by status. */
async function parallelNewKeys(auth: string, writers: number, body: (i: number) => unknown) {
  const answers = await Promise.all(Array.from({ length: writers }, (_, i) => put(auth, `${P}/q${i}`, body(i))));
  const byStatus = new Map<number, string[]>();
  answers.forEach((res, i) => byStatus.set(res.status, [...(byStatus.get(res.status) ?? []), `q${i}`]));
  return { answers, byStatus };
}
const storedKeys = async (auth: string) => ((await system.http.get(P).set('authorization', auth)).body as string[]).sort();

describe('parallel writes of new keys never take a user past a quota', () => {
  it('bytes (SQLite event store): 40 parallel 8 KiB PUTs against 64 KiB store at most 8, each one answered 201, the others 422', async () => {
    const alice = await start(sqliteStore(), 40, { maxUserBytes: 64 * 1024 });
    const { answers, byStatus } = await parallelNewKeys(alice, 40, () => text(8 * 1024));

    const created = (byStatus.get(201) ?? []).sort();
    expect(created.length).toBeGreaterThan(0);
    expect(created.length).toBeLessThanOrEqual(8);
    expect([...byStatus.keys()].filter((s) => s !== 201 && s !== 422 && s !== 429)).toEqual([]);
    for (const res of answers.filter((r) => r.status === 422)) expect(res.body).toMatchObject({ limit: 'PREFERENCE_MAX_USER_BYTES' });
    // Every acknowledged write is stored, and nothing else.
    expect(await storedKeys(alice)).toEqual(created);
    // Without write conflicts past the retries, the quota is filled exactly.
    if (!byStatus.has(429)) expect(created).toHaveLength(8);
  });

  it('keys (memory event store): 60 parallel small PUTs against 16 keys store at most 16, the others 422', async () => {
    const alice = await start(new MemoryEventStore(), 60, { maxKeys: 16 });
    const { answers, byStatus } = await parallelNewKeys(alice, 60, (i) => ({ v: i }));

    const created = (byStatus.get(201) ?? []).sort();
    expect(created.length).toBeGreaterThan(0);
    expect(created.length).toBeLessThanOrEqual(16);
    expect([...byStatus.keys()].filter((s) => s !== 201 && s !== 422 && s !== 429)).toEqual([]);
    for (const res of answers.filter((r) => r.status === 422)) expect(res.body).toMatchObject({ limit: 'PREFERENCE_MAX_KEYS', max: 16 });
    expect(await storedKeys(alice)).toEqual(created);
    if (!byStatus.has(429)) expect(created).toHaveLength(16);
  });
});

/** A store that holds the first append to one stream until released: a writer paused (or killed) between its two appends. */
function holdingStore(inner: EventStore, streamId: string) {
  let release = () => undefined as void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let holding = true;
  const store: EventStore = {
    readStream: (id, options) => inner.readStream(id, options),
    async appendToStream(id, events, options) {
      if (id === streamId && holding) {
        holding = false;
        await released;
      }
      return inner.appendToStream(id, events, options);
    },
    deleteStream: (id) => inner.deleteStream(id),
    listStreams: (prefix) => inner.listStreams(prefix),
    subscribe: (options, handler) => inner.subscribe(options, handler),
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
  return { store, release };
}

describe('a write that claimed its growth and has not appended (its writer paused, or killed)', () => {
  it('counts until it is 10 s old; then it is fenced for a write that needs its room, and can no longer land', async () => {
    let clock = 1_700_000_000_000;
    const held = holdingStore(new MemoryEventStore(), preferenceStreamId('alice', 'b'));
    system = await startTestSystem([
      {
        prefixes: [P],
        adapters: { store: held.store },
        create: (deps) => createPreferenceService({ ...deps, now: () => clock, limits: { maxKeys: 2 } }),
      },
    ]);
    const alice = await system.auth('alice');
    expect((await put(alice, `${P}/a`, { v: 'a' })).status).toBe(201);

    // b's claim is stored, its document is not: a key of two while it may still land.
    const paused = Promise.resolve(put(alice, `${P}/b`, { v: 'b' })); // sent now (a supertest request is sent when awaited)
    await until(async () => (await system.deps[0].store.readStream(preferenceQuotaStreamId('alice'))).revision === 1);
    const refused = await put(alice, `${P}/c`, { v: 'c' });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ limit: 'PREFERENCE_MAX_KEYS' });

    clock += 10_001;
    expect((await put(alice, `${P}/c`, { v: 'c' })).status).toBe(201);
    // The paused write goes on: its append meets the fence, it is decided again, and the quota is full.
    held.release();
    const late = await paused;
    expect(late.status).toBe(422);
    expect(late.body).toMatchObject({ limit: 'PREFERENCE_MAX_KEYS' });
    expect(await storedKeys(alice)).toEqual(['a', 'c']);
  });
});

/** Polls `done` (every 5 ms, at most 2 s). */
async function until(done: () => Promise<boolean>) {
  for (const started = Date.now(); !(await done());) {
    if (Date.now() - started > 2000) throw new Error('condition not met within 2 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('parallel creates, growths, shrinks and deletes of the same keys (SQLite event store)', () => {
  it('never leave more stored than the quotas', async () => {
    const alice = await start(sqliteStore(), 60, { maxKeys: 6, maxUserBytes: 6000 });
    // A fixed mix: 60 writes over 10 keys, sizes from 100 to 2,000 bytes, every seventh a deletion.
    const ops = Array.from({ length: 60 }, (_, i) => ({ key: `k${(i * 7) % 10}`, bytes: 100 + ((i * 337) % 1900), del: i % 7 === 6 }));
    const answers = await Promise.all(
      ops.map((op) =>
        op.del ? system.http.delete(`${P}/${op.key}`).set('authorization', alice) : put(alice, `${P}/${op.key}`, text(op.bytes)),
      ),
    );
    expect(answers.map((a) => a.status).filter((s) => ![200, 201, 204, 404, 422, 429].includes(s))).toEqual([]);
    const keys = await storedKeys(alice);
    const documents = await Promise.all(keys.map(async (key) => (await system.http.get(`${P}/${key}`).set('authorization', alice)).body));
    expect(keys.length).toBeLessThanOrEqual(6);
    expect(documents.reduce((sum, document) => sum + Buffer.byteLength(JSON.stringify(document)), 0)).toBeLessThanOrEqual(6000);
    expect(keys.length).toBeGreaterThan(0);
  });
});
