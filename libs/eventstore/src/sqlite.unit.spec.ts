import { copyFileSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { eventStoreContract } from './eventstore.contract';
import { StoreUnavailableError } from './port';
import { SqliteEventStore, nextCommit } from './sqlite';
import type { RecordedEvent } from './port';

const dir = mkdtempSync(join(tmpdir(), 'udp-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

eventStoreContract('sqlite', async () => new SqliteEventStore(join(dir, `${randomUUID()}.sqlite`)));

describe('SqliteEventStore durability', () => {
  it('keeps what was appended across a reopen of the same file', async () => {
    const file = join(dir, 'reopen.sqlite');
    const first = new SqliteEventStore(file);
    await first.appendToStream('s-1', [{ id: randomUUID(), type: 'A', data: { n: 1 } }], { expectedRevision: 'no_stream' });
    await first.close();
    const second = new SqliteEventStore(file);
    expect((await second.readStream('s-1')).events.map((e) => e.data)).toEqual([{ n: 1 }]);
    await second.close();
  });
});

describe('SqliteEventStore group commit', () => {
  it('commits concurrent appends together, each with its own revision check', async () => {
    const store = new SqliteEventStore(join(dir, 'group.sqlite'));
    const appends = Array.from({ length: 50 }, (_, i) =>
      store.appendToStream(`g-${i % 10}`, [{ id: randomUUID(), type: 'A', data: { i } }], {
        expectedRevision: i < 10 ? 'no_stream' : 'any',
      }),
    );
    // Refused in the same batch: these streams were created a moment earlier in it.
    const refused = Array.from({ length: 5 }, (_, i) =>
      store.appendToStream(`g-${i}`, [{ id: randomUUID(), type: 'B', data: {} }], { expectedRevision: 'no_stream' }),
    );
    await Promise.all(appends);
    expect((await Promise.allSettled(refused)).every((r) => r.status === 'rejected')).toBe(true);
    for (let s = 0; s < 10; s++) expect((await store.readStream(`g-${s}`)).events.map((e) => e.type)).toEqual(['A', 'A', 'A', 'A', 'A']);
    await store.close();
  });

  it("commits a long append (a batch) alone: other streams' short appends pending beside it go first, each long one apart", async () => {
    const store = new SqliteEventStore(join(dir, 'long-apart.sqlite'));
    const batch = (n: number) => Array.from({ length: n }, (_, i) => ({ id: randomUUID(), type: 'A', data: { i } }));
    const LONG = 1000;
    // All asked in one turn: pending together when the first commit is taken.
    const first = store.appendToStream('batch-1', batch(LONG), { expectedRevision: 'no_stream' });
    const second = store.appendToStream('batch-2', batch(LONG), { expectedRevision: 'no_stream' });
    const shorts = Array.from({ length: 3 }, (_, i) => store.appendToStream(`one-${i}`, batch(1), { expectedRevision: 'no_stream' }));
    // A short append to a stream with a long one pending keeps its place behind it.
    const behind = store.appendToStream('batch-1', batch(1), { expectedRevision: LONG - 1 });
    const [a, b, ...rest] = await Promise.all([first, second, ...shorts, behind]);
    const after = rest.pop()!;
    // The short ones in the first commit, before either batch; the batches in commits of their own, in their order.
    for (const short of rest) expect(short.position).toBeLessThan(b.position - BigInt(LONG - 1));
    expect(a.position).toBeLessThan(b.position - BigInt(LONG - 1));
    expect(after.position).toBeGreaterThan(a.position);
    await store.close();
  });

  it('passes a long append over once only, however many short appends keep arriving (no batch waits for ever)', () => {
    const append = (streamId: string, n: number) => ({
      streamId,
      events: Array.from({ length: n }, (_, i) => ({ id: `${streamId}-${i}`, type: 'A', data: '{}', metadata: '{}' })),
    });
    const long = append('batch', 5000);
    const [s1, s2, s3, s4] = ['a', 'b', 'c', 'd'].map((s) => append(s, 1));
    let pending: Array<ReturnType<typeof append> & { passedOver?: boolean }> = [s1, long, s2];
    // The short ones first, once...
    expect(nextCommit(pending)).toEqual([[s1, s2], [long]]);
    // ...then, with new short ones arrived meanwhile, everything up to the long one, in order; the rest after it.
    pending = [long, s3, s4];
    expect(nextCommit(pending)).toEqual([[long], [s3, s4]]);
    expect(nextCommit([s3, s4])).toEqual([[s3, s4], []]);
    // A short append of the long one's stream keeps its place before it.
    const before = append('batch2', 1);
    const long2 = append('batch2', 2000);
    // A medium append (a mobile sync of a few hundred entries) is grouped with the others as any.
    expect(nextCommit([s1, append('medium', 999), s2])[0].length).toBe(3);
    pending = [before, long2, s1];
    expect(nextCommit(pending)).toEqual([[s1], [before, long2]]);
    expect(nextCommit([before, long2])).toEqual([[before, long2], []]);
  });

  it('commits appends still waiting when the store closes', async () => {
    const file = join(dir, 'closing.sqlite');
    const store = new SqliteEventStore(file);
    const pending = store.appendToStream('c-1', [{ id: randomUUID(), type: 'A', data: {} }], { expectedRevision: 'no_stream' });
    await store.close();
    await expect(pending).resolves.toMatchObject({ nextRevision: 0 });
    const reopened = new SqliteEventStore(file);
    expect((await reopened.readStream('c-1')).events).toHaveLength(1);
    await reopened.close();
  });
});

describe('SqliteEventStore when its file is taken away while open', () => {
  const append = (store: SqliteEventStore, id = randomUUID()) =>
    store.appendToStream('f-1', [{ id, type: 'A', data: {} }], { expectedRevision: 'any' });

  it.each([
    ['removed with its directory (DATA_DIR removed)', (file: string) => rmSync(dirname(file), { recursive: true, force: true })],
    [
      'replaced by another file',
      (file: string) => {
        copyFileSync(file, `${file}.new`);
        renameSync(`${file}.new`, file);
      },
    ],
    ['overwritten in place', (file: string) => writeFileSync(file, 'x'.repeat(8192))],
  ])('refuses appends and fails its ping once the file is %s', async (_how, takeAway) => {
    const file = join(dir, randomUUID(), 'events.sqlite');
    const store = new SqliteEventStore(file);
    await append(store);
    expect(await store.ping()).toBe(true);
    takeAway(file);
    expect(await store.ping()).toBe(false);
    await expect(append(store)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.deleteStream('f-1')).rejects.toBeInstanceOf(StoreUnavailableError);
    await store.close();
  });
});

describe('SqliteEventStore erasure', () => {
  /** Every byte of the database, its WAL and its shared-memory index, as latin1 text to search in. */
  const fileBytes = (file: string) =>
    ['', '-wal', '-shm'].map((suffix) => (existsSync(file + suffix) ? readFileSync(file + suffix).toString('latin1') : '')).join('\n');

  // Closed even when an expectation fails, so that no writer thread keeps jest from exiting.
  const stores: SqliteEventStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close().catch(() => undefined)));
  });

  it("leaves none of a deleted stream's bytes in the database file or its WAL, while open and after close", async () => {
    // Where a stream's keys fall in the index pages is random (the names are), and a deletion alone left some of
    // them behind in about one trial in five: so, twenty trials.
    for (let trial = 0; trial < 20; trial++) {
      const file = join(dir, `erasure-${trial}.sqlite`);
      const store = new SqliteEventStore(file);
      stores.push(store);
      const secret = `erasee${randomUUID().replace(/-/g, '')}`;
      const keeper = `keeper${randomUUID().replace(/-/g, '')}`;
      // Interleaved in several commits, so that both streams share pages and the WAL holds many versions of them.
      for (let batch = 0; batch < 5; batch++) {
        const items = (owner: string) =>
          Array.from({ length: 40 }, (_, i) => ({
            id: randomUUID(),
            type: 'A',
            data: { item: `${owner}-item-${batch * 40 + i}`, pad: 'x'.repeat(100) },
          }));
        await store.appendToStream(`s-${secret}`, items(secret), { expectedRevision: 'any' });
        await store.appendToStream(`s-${keeper}`, items(keeper), { expectedRevision: 'any' });
      }
      expect(fileBytes(file)).toContain(secret);
      await store.deleteStream(`s-${secret}`);
      expect({ trial, left: fileBytes(file).includes(secret) }).toEqual({ trial, left: false });
      expect(fileBytes(file)).toContain(keeper);
      expect((await store.readStream(`s-${keeper}`)).events).toHaveLength(200);
      await store.close();
      expect({ trial, leftAfterClose: fileBytes(file).includes(secret) }).toEqual({ trial, leftAfterClose: false });
    }
  }, 60_000);
});

describe('SqliteEventStore erasure of a long stream among many', () => {
  it("deletes 50,000 events while other streams' appends go on (their longest wait printed, against a few slices' target)", async () => {
    const file = join(dir, 'long-erasure.sqlite');
    const store = new SqliteEventStore(file);
    try {
      const events = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ id: randomUUID(), type: 'A', data: { tag, i } }));
      for (let i = 0; i < 100; i++) await store.appendToStream(`other-${i}`, events(1000, 'other'), { expectedRevision: 'any' });
      for (let i = 0; i < 10; i++) await store.appendToStream('victim', events(5000, 'victim'), { expectedRevision: 'any' });
      const deleted = store.deleteStream('victim');
      let done = false;
      void deleted.finally(() => (done = true));
      const waits: number[] = [];
      for (let i = 0; !done; i++) {
        const started = performance.now();
        await store.appendToStream(`other-${i % 100}`, events(1, 'during'), { expectedRevision: 'any' });
        waits.push(performance.now() - started);
      }
      await deleted;
      const longest = Math.max(...waits);
      process.stderr.write(
        `[erasure] events_deleted=50000 of=150000 appends_meanwhile=${waits.length} longest_append_ms=${longest.toFixed(1)} ` +
          `(target: longest_append_ms < 100)\n`,
      );
      // What holds on any machine, busy or not: other streams' appends went on while the stream was deleted, none
      // waited seconds (18-48 ms here, 190 ms before: docs/erasure.md). The target is printed above.
      expect(waits.length).toBeGreaterThan(1);
      expect(longest).toBeLessThan(5000);
      expect((await store.readStream('victim')).events).toEqual([]);
      expect((await store.readStream('other-0')).events.length).toBeGreaterThan(1000);
    } finally {
      await store.close();
    }
  }, 120_000);
});

describe('SqliteEventStore file from before stream keys', () => {
  it('upgrades it at open: every event kept at its position, the counter kept, appends and idempotency as before', async () => {
    const file = join(dir, 'old-schema.sqlite');
    const Database = require('better-sqlite3') as typeof import('better-sqlite3');
    const old = new Database(file);
    old.pragma('journal_mode = WAL');
    old.exec(`CREATE TABLE events (position INTEGER PRIMARY KEY AUTOINCREMENT, stream_id TEXT NOT NULL, revision INTEGER NOT NULL,
      event_id TEXT NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, created_at INTEGER NOT NULL,
      UNIQUE (stream_id, revision), UNIQUE (stream_id, event_id));
      CREATE TABLE streams (stream_id TEXT PRIMARY KEY, revision INTEGER NOT NULL);`);
    const insert = old.prepare(
      'INSERT INTO events (stream_id, revision, event_id, type, data, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, 1)',
    );
    for (let r = 0; r < 3; r++) insert.run('a-1', r, `e${r}`, 'A', JSON.stringify({ r }), '{}');
    insert.run('b-1', 0, 'gone', 'A', '{}', '{}');
    old.exec("DELETE FROM events WHERE stream_id = 'b-1'");
    old.exec("INSERT INTO streams VALUES ('a-1', 2)");
    old.close();

    const store = new SqliteEventStore(file);
    try {
      const read = await store.readStream('a-1');
      expect(read.events.map((e) => [e.revision, e.data, String(e.position)])).toEqual([
        [0, { r: 0 }, '1'],
        [1, { r: 1 }, '2'],
        [2, { r: 2 }, '3'],
      ]);
      // A position is never given twice, not even the erased one's (4).
      const appended = await store.appendToStream('a-1', [{ id: 'e3', type: 'A', data: { r: 3 } }], { expectedRevision: 2 });
      expect(appended.position).toBe(5n);
      // The same event id again: done already.
      // (Where each event went, `stored`, is told only by the append that stored it.)
      const again = await store.appendToStream('a-1', [{ id: 'e3', type: 'A', data: { r: 3 } }], { expectedRevision: 2 });
      expect({ ...again, stored: undefined }).toEqual({ ...appended, stored: undefined });
      // No index of the events holds a stream id any more (only the streams table's primary key does).
      const indexes = new Database(file, { readonly: true });
      const columns = indexes
        .prepare<[], string>(
          "SELECT il.name FROM sqlite_master m, pragma_index_list(m.name) i, pragma_index_info(i.name) il WHERE m.name = 'events'",
        )
        .pluck()
        .all();
      indexes.close();
      expect(new Set(columns)).toEqual(new Set(['stream_key', 'revision']));
    } finally {
      await store.close();
    }
  });

  it('drops the index of event ids a file from before 2026-11-28 has; a retried append is still recognised', async () => {
    const file = join(dir, 'event-id-index.sqlite');
    const before = new SqliteEventStore(file);
    await before.appendToStream('a-1', [{ id: 'e1', type: 'A', data: {} }], { expectedRevision: 'no_stream' });
    await before.close();
    const Database = require('better-sqlite3') as typeof import('better-sqlite3');
    const old = new Database(file);
    old.exec('CREATE INDEX events_by_event_id ON events (stream_key, event_id)');
    old.close();
    const store = new SqliteEventStore(file);
    try {
      const indexes = new Database(file, { readonly: true });
      const names = indexes
        .prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'")
        .pluck()
        .all();
      indexes.close();
      expect(names).toEqual(['events_by_stream']);
      const again = await store.appendToStream('a-1', [{ id: 'e1', type: 'A', data: {} }], { expectedRevision: 'no_stream' });
      expect(again.nextRevision).toBe(0);
      expect((await store.readStream('a-1')).events).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});

describe('SqliteEventStore live subscriptions', () => {
  it('deliver what a read gives back, in order, once each, refused and repeated appends included', async () => {
    const store = new SqliteEventStore(join(dir, 'live.sqlite'));
    const live: RecordedEvent[] = [];
    await store.appendToStream('l-0', [{ id: randomUUID(), type: 'A', data: { first: true } }], { expectedRevision: 'no_stream' });
    const sub = store.subscribe({ streamPrefixes: ['l-'] }, async (e) => void live.push(e));
    await sub.caughtUp();
    const retried = { id: randomUUID(), type: 'R', data: { undefinedDropped: undefined, nested: { a: [1, 2] } } };
    await Promise.allSettled([
      ...Array.from({ length: 20 }, (_, i) =>
        store.appendToStream(
          `l-${1 + (i % 4)}`,
          [
            { id: randomUUID(), type: 'A', data: { i } },
            { id: randomUUID(), type: 'B', data: { i } },
          ],
          { expectedRevision: 'any' },
        ),
      ),
      store.appendToStream('l-0', [{ id: randomUUID(), type: 'X', data: {} }], { expectedRevision: 'no_stream' }), // refused
      store.appendToStream('l-9', [retried], { expectedRevision: 'any' }),
      store.appendToStream('l-9', [retried], { expectedRevision: 'any' }), // the same event again: stored once
    ]);
    await sub.caughtUp();
    const readBack: RecordedEvent[] = [];
    const fresh = store.subscribe({ streamPrefixes: ['l-'] }, async (e) => void readBack.push(e));
    await fresh.caughtUp();
    expect(live).toEqual(readBack);
    expect(live).toHaveLength(1 + 40 + 1);
    expect(live.map((e) => e.position)).toEqual([...live.map((e) => e.position)].sort((a, b) => (a < b ? -1 : 1)));
    await store.close();
  });
});

describe('SqliteEventStore live subscriptions fed from the commit', () => {
  const event = (i: number) => ({ id: randomUUID(), type: 'A', data: { i } });

  it('miss nothing committed while a handler is still busy with an earlier event (a projection retrying while its store is down)', async () => {
    const store = new SqliteEventStore(join(dir, `${randomUUID()}.sqlite`));
    let release: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const delivered: RecordedEvent[] = [];
    const sub = store.subscribe({ streamPrefixes: ['b-'] }, async (e) => {
      if (delivered.length === 0) await blocked;
      delivered.push(e);
    });
    await sub.caughtUp();
    await store.appendToStream('b-1', [event(0)], { expectedRevision: 'any' });
    // Separate commits while the handler waits on the first event, some of another prefix.
    for (let i = 1; i <= 10; i++)
      await store.appendToStream(i % 3 ? 'b-2' : 'other-1', [event(i), event(i + 100)], { expectedRevision: 'any' });
    release();
    await sub.caughtUp();
    await store.appendToStream('b-3', [event(11)], { expectedRevision: 'any' });
    await sub.caughtUp();
    const readBack: RecordedEvent[] = [];
    await store.subscribe({ streamPrefixes: ['b-'] }, async (e) => void readBack.push(e)).caughtUp();
    expect(delivered).toEqual(readBack);
    expect(delivered.map((e) => e.data.i)).toEqual([0, 1, 101, 2, 102, 4, 104, 5, 105, 7, 107, 8, 108, 10, 110, 11]);
    await store.close();
  });

  it('hand an idle subscription the events of a commit without reading them back', async () => {
    // The watch for other processes' commits (every 50 ms) is set far off: on a busy machine it could read first.
    const store = new SqliteEventStore(join(dir, `${randomUUID()}.sqlite`), { otherWritersPollMs: 3_600_000 });
    await store.appendToStream('c-1', [event(0)], { expectedRevision: 'any' });
    const delivered: RecordedEvent[] = [];
    const sub = store.subscribe({ streamPrefixes: ['c-'] }, async (e) => void delivered.push(e));
    await sub.caughtUp();
    const reads = jest.spyOn((store as unknown as { stmt: { readAfter: { all: () => unknown } } }).stmt.readAfter, 'all');
    await store.appendToStream('c-1', [event(1), event(2)], { expectedRevision: 0 });
    // Not caughtUp(): it reads once more by design.
    while (delivered.length < 3) await new Promise((resolve) => setImmediate(resolve));
    expect(delivered.map((e) => [e.revision, e.data.i])).toEqual([
      [0, 0],
      [1, 1],
      [2, 2],
    ]);
    expect(reads).not.toHaveBeenCalled();
    await store.close();
  });
});

describe('SqliteEventStore shared by several processes', () => {
  it("wakes a subscription when another connection on the same file commits (another replica's write)", async () => {
    // Given two stores on one file, each with its own connections and writer, as two processes would have
    const file = join(mkdtempSync(join(tmpdir(), 'udp-sqlite-shared-')), 'events.sqlite');
    const here = new SqliteEventStore(file);
    const there = new SqliteEventStore(file);
    const seen: string[] = [];
    const sub = here.subscribe({ streamPrefixes: ['shared-'] }, async (e) => void seen.push(e.type));
    await sub.caughtUp();

    // When only the other one appends, then the subscription here sees it, without any write of its own
    await there.appendToStream('shared-1', [{ id: randomUUID(), type: 'FromThere', data: {} }], { expectedRevision: 'no_stream' });
    const deadline = Date.now() + 2000;
    while (seen.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(seen).toEqual(['FromThere']);
    await sub.stop();
    await here.close();
    await there.close();
    rmSync(dirname(file), { recursive: true, force: true });
  });
  it('moves the write epoch when another connection commits: an append decided before it is refused', async () => {
    // Given two stores on one file, and an epoch seen here after an append of its own
    const file = join(mkdtempSync(join(tmpdir(), 'udp-sqlite-shared-')), 'events.sqlite');
    const here = new SqliteEventStore(file);
    const there = new SqliteEventStore(file);
    const event = (type: string) => ({ id: randomUUID(), type, data: { text: 'x'.repeat(3000) } });
    await here.appendToStream('epoch-1', [event('A')], { expectedRevision: 'no_stream' });
    const epoch = here.writeEpoch();
    // Its own appends, a thousand pages of them (the WAL checkpointed on the way), and its reads leave it as it is
    for (let i = 0; i < 40; i++)
      await here.appendToStream(
        `epoch-own-${i}`,
        Array.from({ length: 40 }, () => event('Own')),
        { expectedRevision: 'no_stream' },
      );
    await here.readStream('epoch-1');
    expect((await here.appendToStream('epoch-1', [event('B')], { expectedRevision: 0, unchangedSinceEpoch: epoch })).epoch).toBe(epoch);

    // When the other one appends (to another stream: the revision check alone would not see it)
    await there.appendToStream('epoch-2', [event('FromThere')], { expectedRevision: 'no_stream' });

    // Then an append here from the older epoch is refused, whose revision matches, and the epoch has moved
    await expect(here.appendToStream('epoch-1', [event('C')], { expectedRevision: 1, unchangedSinceEpoch: epoch })).rejects.toThrow(
      /another writer or an erasure/,
    );
    expect(here.writeEpoch()).not.toBe(epoch);
    expect((await here.readStream('epoch-1')).events.map((e) => e.type)).toEqual(['A', 'B']);
    await here.close();
    await there.close();
    rmSync(dirname(file), { recursive: true, force: true });
  });
});
