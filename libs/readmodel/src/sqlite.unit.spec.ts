import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { readModelContract } from './readmodel.contract';
import { type Collection, param } from './port';
import { SqliteReadModelStore } from './sqlite';
import { partitionKey } from './sqlite-filter';

readModelContract('sqlite', () => SqliteReadModelStore.open({ file: join(mkdtempSync(join(tmpdir(), 'udp-rm-')), 'read-models.sqlite') }));

describe('SQLite read models rebuilt from nothing', () => {
  const indexesOf = (file: string) =>
    new Database(file, { readonly: true })
      .prepare<[], string>(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'rm_notes__%' AND name NOT LIKE '%\\_\\_key\\_id' ESCAPE '\\'",
      )
      .pluck()
      .all();

  it('given a new file, when indexes are declared, then they are built once the projectors caught up, and queries answer meanwhile', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'udp-rm-')), 'read-models.sqlite');
    const store = await SqliteReadModelStore.open({ file, deferIndexes: true });
    await store.ensureIndex('notes', { userId: 1, date: -1 });
    const notes = store.collection<{ _id: string; userId: string; date: number; revision: number }>('notes');
    for (let i = 0; i < 5; i++) await notes.upsertIfNewer({ _id: `u${i % 2}/${i}`, userId: `u${i % 2}`, date: i, revision: 0 });
    await store.checkpoints().save('notes', 5n);
    expect(indexesOf(file)).toEqual([]);
    expect((await notes.find({ userId: 'u0' }, { sort: { date: -1 } })).map((n) => n.date)).toEqual([4, 2, 0]);

    await store.caughtUp();
    expect(indexesOf(file)).toEqual(['rm_notes__userId_a__date_d']);
    expect((await notes.find({ userId: 'u0' }, { sort: { date: -1 }, limit: 2 })).map((n) => n.date)).toEqual([4, 2]);
    await store.close();

    // A file with checkpoints builds a newly declared index at once.
    const again = await SqliteReadModelStore.open({ file, deferIndexes: true });
    await again.ensureIndex('notes', { date: 1 });
    expect(indexesOf(file).sort()).toEqual(['rm_notes__date_a', 'rm_notes__userId_a__date_d']);
    await again.close();
  });

  it('given a new file, while it is rebuilt, then writes are committed in larger transactions; once caught up, as usual', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'udp-rm-')), 'read-models.sqlite');
    const store = await SqliteReadModelStore.open({ file, deferIndexes: true, maxBatch: 1000 });
    const notes = store.collection<{ _id: string; userId: string; revision: number }>('notes');
    const reader = new Database(file, { readonly: true });
    const committed = () => reader.prepare<[], number>('SELECT count(*) FROM "rm_notes"').pluck().get();
    const write = (from: number, count: number) => {
      // One turn of the event loop: no commit timer runs in between.
      for (let i = from; i < from + count; i++) void notes.upsertIfNewer({ _id: `u/${i}`, userId: 'u', revision: 0 });
    };
    try {
      // Rebuilt from nothing: 5,000 writes, five times the usual batch, are one transaction still.
      write(0, 5000);
      expect(committed()).toBe(0);
      await store.checkpoints().save('notes', 1n);
      await store.caughtUp();
      expect(committed()).toBe(5000);
      // Caught up: the usual batch of 1,000 writes is committed as it is reached.
      write(5000, 1000);
      expect(committed()).toBe(6000);
    } finally {
      reader.close();
      await store.close();
    }
  });

  it('given an index that includes the fields a query reads, then the query is answered from the index alone', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'udp-rm-')), 'read-models.sqlite');
    const store = await SqliteReadModelStore.open({ file });
    await store.ensureIndex('notes', { userId: 1, date: -1 }, { include: ['userId', 'text'] });
    const notes = store.collection<{ _id: string; userId: string; date: number; text: string; revision: number }>('notes');
    for (let i = 0; i < 5; i++)
      await notes.upsertIfNewer({ _id: `u${i % 2}/${i}`, userId: `u${i % 2}`, date: i, text: `t${i}`, revision: 0 });
    const page = notes.prepareFind({ userId: param('userId', 'string') }, { sort: { date: -1 }, select: ['text'] });
    expect(await page({ userId: 'u0' }, 2)).toEqual([{ text: 't4' }, { text: 't2' }]);
    const plan = store.database
      .prepare('EXPLAIN QUERY PLAN SELECT "f_text" FROM "rm_notes" WHERE "k_userId" = 1 AND "f_userId" = ? ORDER BY "f_date" DESC LIMIT 2')
      .all('u0') as Array<{ detail: string }>;
    expect(plan.map((step) => step.detail).join(' ')).toContain('USING COVERING INDEX rm_notes__userId_a__date_d__with_userId_text');
    await store.close();
  });

  it('given an index no query uses any more, when it is dropped, then the file loses it and queries answer as before', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'udp-rm-')), 'read-models.sqlite');
    const store = await SqliteReadModelStore.open({ file });
    await store.ensureIndex('notes', { userId: 1, date: -1 });
    await store.ensureIndex('notes', { date: 1 });
    const notes = store.collection<{ _id: string; userId: string; date: number; revision: number }>('notes');
    for (let i = 0; i < 5; i++) await notes.upsertIfNewer({ _id: `u${i % 2}/${i}`, userId: `u${i % 2}`, date: i, revision: 0 });
    await store.dropIndex('notes', { date: 1 });
    // Dropped again (the next start): nothing to do.
    await store.dropIndex('notes', { date: 1 });
    expect(indexesOf(file)).toEqual(['rm_notes__userId_a__date_d']);
    expect((await notes.find({ date: { $gte: 3 } }, { sort: { date: 1 } })).map((n) => n.date)).toEqual([3, 4]);
    await store.close();

    // Declared during a rebuild (put off), then dropped: never built.
    const rebuilt = await SqliteReadModelStore.open({
      file: join(mkdtempSync(join(tmpdir(), 'udp-rm-')), 'read-models.sqlite'),
      deferIndexes: true,
    });
    await rebuilt.ensureIndex('notes', { date: 1 });
    await rebuilt.dropIndex('notes', { date: 1 });
    await rebuilt.caughtUp();
    expect(
      rebuilt.database.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'rm_notes__date_a'").pluck().get(),
    ).toBe(0);
    await rebuilt.close();
  });
});

describe('SQLite read models: the write-ahead log', () => {
  type Note = { _id: string; text: string; revision: number };
  // Writes may wait long for the thread here: a loaded machine's copies must not turn the holds off. Commits are the
  // test's own (`writeRound`), not the timer's.
  const opened = async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'udp-rm-')), 'read-models.sqlite');
    const store = await SqliteReadModelStore.open({ file, holdWritesMs: 5000, commitEveryMs: 60_000 });
    return { file, store, notes: store.collection<Note>('notes') };
  };
  /**
   * 500 documents of 2 KB at `round` (about 2 MB of log) in one transaction, as a busy store makes them: the
   * transaction opens with the first write, at once after the last commit (a write always waits), stays open 50 ms
   * (the commit timer) while the thread copies the last commit, then is committed.
   */
  const writeRound = async (store: SqliteReadModelStore, notes: Collection<Note>, round: number) => {
    const text = 'x'.repeat(2000);
    const docs = Array.from({ length: 500 }, (_, i) => ({ _id: `u${i % 50}/${i}`, text, revision: round }));
    await notes.upsertIfNewer(docs[0]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await notes.upsertManyIfNewer(docs.slice(1));
    store.commit();
  };

  it('given each transaction opened at once after the last commit, then the log starts over before this connection would checkpoint it, and reads are never held', async () => {
    const { file, store, notes } = await opened();
    let largestLog = 0;
    let readsWhileHeld = 0;
    const held = () => store.writesHeld !== null;
    try {
      // About 2 MB of log a round, 40 rounds: 80 MB, each transaction opened before the thread copied the last commit.
      for (let round = 1; round <= 40; round++) {
        await writeRound(store, notes, round);
        largestLog = Math.max(largestLog, statSync(`${file}-wal`).size);
        if (held()) {
          expect((await notes.get('u0/0'))?.revision).toBe(round);
          if (held()) readsWhileHeld++;
        }
      }
      // Held past 32 MiB until the thread copied the last commit: the next transaction started the log over. Before,
      // it grew to 64 MiB, where this connection checkpointed it on the event loop (40-65 ms in batch-load).
      expect(largestLog).toBeLessThan(48 * 1024 * 1024);
      expect(readsWhileHeld).toBeGreaterThan(0);
      expect((await notes.find({}, { readOnly: true })).every((note) => note.revision === 40)).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('given writes held for the thread when the store closes, then they are made and kept', async () => {
    const { file, store, notes } = await opened();
    for (let round = 1; !store.writesHeld && round <= 40; round++) await writeRound(store, notes, round);
    expect(store.writesHeld).not.toBeNull();
    const held = notes.upsertIfNewer({ _id: 'late/1', text: 'held', revision: 1 });
    await store.close();
    await expect(held).resolves.toBe(true);
    const reopened = await SqliteReadModelStore.open({ file });
    expect((await reopened.collection<Note>('notes').get('late/1'))?.text).toBe('held');
    await reopened.close();
  });
});

describe('SQLite read models: documents read by id', () => {
  it('given a document read by id, when it or its collection is written, then the next read by id sees the file', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'udp-rm-')), 'read-models.sqlite');
    const store = await SqliteReadModelStore.open({ file });
    await store.ensureIndex('heads', { userId: 1 });
    const heads = store.collection<{ _id: string; userId: string; position: string; revision: number }>('heads');
    const head = (revision: number) => ({ _id: 'u1', userId: 'u1', position: `p${revision}`, revision });
    await heads.upsertIfNewer(head(1));
    expect((await heads.get('u1'))?.position).toBe('p1');
    expect((await heads.get('u1'))?.position).toBe('p1');

    await heads.upsertIfNewer(head(2));
    expect((await heads.get('u1'))?.position).toBe('p2');
    // An older one is not stored, nor read.
    await heads.upsertIfNewer(head(0));
    expect((await heads.get('u1'))?.position).toBe('p2');
    await heads.updateMany({ userId: 'u1' }, { position: 'set' });
    expect((await heads.get('u1'))?.position).toBe('set');
    await heads.deleteMany({ userId: 'u1' });
    expect(await heads.get('u1')).toBeNull();
    await heads.upsertIfNewer(head(5));
    expect((await heads.get('u1'))?.position).toBe('p5');
    // A read never hands out the object it keeps: a change to it is nobody else's.
    (await heads.get('u1'))!.position = 'changed by a caller';
    expect((await heads.get('u1'))?.position).toBe('p5');

    // After an erasure's compaction switched files, the documents are those of the new file.
    await heads.deleteMany({ userId: 'u1' });
    await store.scrub();
    expect(await heads.get('u1')).toBeNull();
    await store.close();
  });
});

describe('SQLite read models: the id index', () => {
  type Entry = { _id: string; userId: string; n: number; revision: number };
  const entry = (user: string, i: number, revision = 0): Entry => ({ _id: `${user}/item-${i}`, userId: user, n: i, revision });
  /** Puts a collection in the layout before the owner's key: an index on the key alone, the hash of the whole id. Its keys. */
  const toLayoutBefore = (file: string, name: string) => {
    const db = new Database(file);
    try {
      db.function('whole_id_key', { deterministic: true }, (id: unknown) => partitionKey(id));
      db.exec(
        `DROP INDEX "rm_${name}__key_id"; CREATE INDEX "rm_${name}__key" ON "rm_${name}" (key); UPDATE "rm_${name}" SET key = whole_id_key(id)`,
      );
      return db.prepare(`SELECT count(DISTINCT key) FROM "rm_${name}"`).pluck().get();
    } finally {
      db.close();
    }
  };

  it("given a user's documents among others', then they share one key, and each is found by its id", async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'udp-rm-')), 'read-models.sqlite');
    const store = await SqliteReadModelStore.open({ file });
    const entries = store.collection<Entry>('entries');
    for (let i = 0; i < 50; i++) for (const user of ['alice', 'bob']) await entries.upsertIfNewer(entry(user, i));
    await entries.upsertIfNewer({ _id: 'alice', userId: 'alice', n: -1, revision: 0 });
    store.commit();
    const keys = store.database.prepare<[], number>('SELECT DISTINCT key FROM "rm_entries" WHERE id LIKE \'alice%\'').pluck().all();
    // Her 50 entries and the document named by her id alone: one key, so they sit together in the index.
    expect(keys).toHaveLength(1);
    expect((await entries.get('alice/item-7'))?.n).toBe(7);
    expect((await entries.get('bob/item-7'))?.userId).toBe('bob');
    expect((await entries.getMany(['alice/item-1', 'bob/item-2', 'carol/item-1'])).map((e) => e._id)).toEqual([
      'alice/item-1',
      'bob/item-2',
    ]);
    expect((await entries.find({ _id: { $in: ['alice/item-3', 'bob/item-4'] } })).map((e) => e._id).sort()).toEqual([
      'alice/item-3',
      'bob/item-4',
    ]);
    expect((await entries.find({ $or: [{ _id: 'bob/item-5' }, { _id: { $eq: 'alice/item-6' } }] })).map((e) => e._id).sort()).toEqual([
      'alice/item-6',
      'bob/item-5',
    ]);
    const byId = entries.prepareFind({ _id: param('id', 'string') }, { sort: { n: 1 }, select: ['n'] });
    expect(await byId({ id: 'bob/item-9' })).toEqual([{ n: 9 }]);
    expect(await entries.updateMany({ _id: 'bob/item-9' }, { n: 90 })).toBe(1);
    expect(await byId({ id: 'bob/item-9' })).toEqual([{ n: 90 }]);
    expect(await entries.deleteMany({ _id: 'alice/item-3' })).toBe(1);
    expect(await entries.get('alice/item-3')).toBeNull();
    // Ids that name no owner: each keyed by its whole self (the empty one too), found as any other.
    for (const id of ['', '/lead', 'plain', 'a//b']) await entries.upsertIfNewer({ _id: id, userId: 'x', n: id.length, revision: 0 });
    for (const id of ['', '/lead', 'plain', 'a//b']) expect((await entries.get(id))?.n).toBe(id.length);
    const plan = store.database
      .prepare('EXPLAIN QUERY PLAN SELECT doc FROM "rm_entries" WHERE key = ? AND id = ?')
      .all(keys[0], 'alice/item-7') as Array<{ detail: string }>;
    expect(plan.map((step) => step.detail).join(' ')).toContain('USING INDEX rm_entries__key_id (key=? AND id=?)');
    await store.close();
  });

  it('given a file from before, keyed by each whole id, when it is opened, then its keys are made again and every document is found', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'udp-rm-')), 'read-models.sqlite');
    const store = await SqliteReadModelStore.open({ file });
    const entries = store.collection<Entry>('entries');
    for (let i = 0; i < 20; i++) await entries.upsertIfNewer(entry('alice', i));
    await store.close();
    expect(toLayoutBefore(file, 'entries')).toBe(20);

    const again = await SqliteReadModelStore.open({ file });
    const reopened = again.collection<Entry>('entries');
    expect((await reopened.get('alice/item-12'))?.n).toBe(12);
    // A newer version replaces the row found by its id; an older one is refused: no second row for one id.
    expect(await reopened.upsertIfNewer(entry('alice', 12, 1))).toBe(true);
    expect(await reopened.upsertIfNewer(entry('alice', 13, -1))).toBe(false);
    again.commit();
    const db = again.database;
    expect(db.prepare('SELECT count(*) FROM "rm_entries"').pluck().get()).toBe(20);
    expect(db.prepare('SELECT count(DISTINCT key) FROM "rm_entries"').pluck().get()).toBe(1);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'rm_entries'").pluck().all()).toEqual([
      'rm_entries__key_id',
    ]);
    await again.close();
  });

  it.each([
    ['kept in the layout before (keyed again when first opened)', 'older'],
    ['made new (its table first made then)', 'late'],
  ])(
    'given a collection %s while an erasure compacts the file, then that compaction is given up, and the next one keeps the collection whole',
    async (_, name) => {
      const file = join(mkdtempSync(join(tmpdir(), 'udp-rm-')), 'read-models.sqlite');
      const setup = await SqliteReadModelStore.open({ file });
      for (const made of ['erased', 'older']) {
        const collection = setup.collection<Entry>(made);
        for (let i = 0; i < 5; i++) await collection.upsertIfNewer(entry('bob', i));
      }
      await setup.close();
      toLayoutBefore(file, 'older');

      const store = await SqliteReadModelStore.open({ file });
      await store.collection<Entry>('erased').deleteMany({ userId: 'bob' });
      // Opened once the compaction's copy is taken, before it switches to it: the copy has it unmigrated, or not at all.
      const copying = store as unknown as { vacuumInto(target: string): Promise<void> };
      const vacuumInto = copying.vacuumInto.bind(store);
      let opened = false;
      copying.vacuumInto = async (target) => {
        await vacuumInto(target);
        if (opened) return;
        opened = true;
        store.collection<Entry>(name);
      };
      // That compaction is given up (the erasure asking for it fails and is tried again), never switched to.
      await expect(store.scrub()).rejects.toThrow('the compaction was overtaken');
      await store.scrub();
      const collection = store.collection<Entry>(name);
      if (name === 'late') await collection.upsertIfNewer(entry('bob', 3));
      expect((await collection.get('bob/item-3'))?.n).toBe(3);
      expect(await collection.upsertIfNewer(entry('bob', 3, 1))).toBe(true);
      store.commit();
      expect(store.database.prepare(`SELECT count(*) FROM "rm_${name}" WHERE id = 'bob/item-3'`).pluck().get()).toBe(1);
      expect(
        store.database.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?").pluck().all(`rm_${name}`),
      ).toEqual([`rm_${name}__key_id`]);
      await store.close();
    },
  );
});

describe('SQLite read models: erasure and failures', () => {
  const fresh = () => join(mkdtempSync(join(tmpdir(), 'udp-rm-')), 'read-models.sqlite');
  /** Copies of `needle` in every file of the store's directory (the files of every generation, logs included). */
  const bytesOf = (file: string, needle: string) =>
    readdirSync(dirname(file)).reduce((n, name) => {
      const buffer = readFileSync(join(dirname(file), name));
      let at = -1;
      while ((at = buffer.indexOf(needle, at + 1)) >= 0) n++;
      return n;
    }, 0);

  it('given documents changed in place among other users, when one user is deleted and scrubbed, then no byte of their id is in the files', async () => {
    const file = fresh();
    const store = await SqliteReadModelStore.open({ file });
    await store.ensureIndex('h', { userId: 1, date: -1, item_id: 1 });
    const entries = store.collection<{ _id: string; userId: string; item_id: string; date: number; note?: string; revision: number }>('h');
    const victim = 'VICTIMUSER-7f3a9c';
    const users = ['alice-000001', victim, 'carol-00003'];
    for (let i = 0; i < 3000; i++)
      for (const u of users) await entries.upsertIfNewer({ _id: `${u}/item${i}`, userId: u, item_id: `item${i}`, date: i, revision: 1 });
    // Changed in place, longer: SQLite moves the rows, and a rebuilt page can keep an old copy in its free space.
    for (let i = 0; i < 3000; i += 3)
      for (const u of users)
        await entries.upsertIfNewer({
          _id: `${u}/item${i}`,
          userId: u,
          item_id: `item${i}`,
          date: i + 1,
          note: 'x'.repeat(i % 50),
          revision: 2,
        });
    store.commit();

    expect(await entries.deleteMany({ userId: victim })).toBe(3000);
    await store.scrub();
    expect(bytesOf(file, victim)).toBe(0);
    expect(await entries.count({ userId: 'alice-000001' })).toBe(3000);
    await store.close();
  }, 60_000);

  it('given writes while an erasure compacts the file, then every write is kept, and after a restart the file is the base one again', async () => {
    const file = fresh();
    const store = await SqliteReadModelStore.open({ file });
    await store.ensureIndex('h', { userId: 1, date: -1 });
    const entries = store.collection<{ _id: string; userId: string; date: number; revision: number }>('h');
    const victim = 'VICTIMUSER-c0ffee';
    for (let i = 0; i < 20_000; i++) await entries.upsertIfNewer({ _id: `u${i % 50}/${i}`, userId: `u${i % 50}`, date: i, revision: 1 });
    for (let i = 0; i < 500; i++) await entries.upsertIfNewer({ _id: `${victim}/${i}`, userId: victim, date: i, revision: 1 });
    store.commit();

    expect(await entries.deleteMany({ userId: victim })).toBe(500);
    const scrubbed = store.scrub();
    // While the copy is made and replayed: new documents, changed ones, a deletion and checkpoints.
    let written = 0;
    let finished = false;
    void scrubbed.finally(() => (finished = true));
    while (!finished) {
      await entries.upsertIfNewer({ _id: `new/${written}`, userId: 'new', date: written, revision: 1 });
      await entries.upsertIfNewer({ _id: `u1/${written * 50 + 1}`, userId: 'u1', date: -written, revision: 2 });
      await store.checkpoints().save('p', BigInt(written));
      written++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    await scrubbed;
    expect(written).toBeGreaterThan(0);
    expect(bytesOf(file, victim)).toBe(0);
    expect(await entries.count({ userId: 'new' })).toBe(written);
    expect((await entries.get(`u1/${(written - 1) * 50 + 1}`))?.date).toBe(-(written - 1));
    expect(await store.checkpoints().load('p')).toBe(BigInt(written - 1));
    expect(readdirSync(dirname(file)).some((name) => name.includes('.g'))).toBe(true);
    await store.close();

    const reopened = await SqliteReadModelStore.open({ file });
    expect(readdirSync(dirname(file)).filter((name) => !name.startsWith('read-models.sqlite-'))).toEqual(['read-models.sqlite']);
    expect(await reopened.collection('h').count({ userId: 'new' })).toBe(written);
    expect(await reopened.checkpoints().load('p')).toBe(BigInt(written - 1));
    await reopened.close();
  }, 60_000);

  it('given 200,000 documents, when one is erased, then the compaction leaves no byte of it and never stalls the event loop (the longest hold printed)', async () => {
    const file = fresh();
    const store = await SqliteReadModelStore.open({ file });
    await store.ensureIndex('h', { userId: 1, date: -1, item_id: 1 });
    const entries = store.collection<{ _id: string; userId: string; item_id: string; date: number; revision: number }>('h');
    for (let i = 0; i < 200_000; i++)
      await entries.upsertIfNewer({ _id: `u${i % 1000}/${i}`, userId: `u${i % 1000}`, item_id: `urn:item:${i}`, date: i, revision: 1 });
    store.commit();
    expect(await entries.deleteMany({ userId: 'u7' })).toBe(200);
    // The longest gap between ticks of a 1 ms timer: how long the event loop was held at a time.
    let last = performance.now();
    let maxMs = 0;
    const probe = setInterval(() => {
      const now = performance.now();
      maxMs = Math.max(maxMs, now - last);
      last = now;
    }, 1);
    const started = performance.now();
    await store.scrub();
    // A turn of the event loop for the probe: a block that ended just now is seen only then.
    await new Promise((resolve) => setTimeout(resolve, 20));
    clearInterval(probe);
    process.stderr.write(
      `[compaction] documents=200000 compaction_ms=${Math.round(performance.now() - started)} loop_held_max_ms=${maxMs.toFixed(1)} ` +
        `(target: loop_held_max_ms < 50)\n`,
    );
    // What holds on any machine, busy or not: no stall of a second. The VACUUM on the event loop of before (273 ms
    // here) shows on the printed line against its target, not here: a loaded machine's own pauses come near that.
    expect(maxMs).toBeLessThan(1000);
    expect(bytesOf(file, 'u7/')).toBe(0);
    await store.close();
  }, 120_000);

  it('given rows deleted and the process stopped before the compaction, then the reopened store still owes it', async () => {
    const file = fresh();
    const store = await SqliteReadModelStore.open({ file });
    const docs = store.collection<{ _id: string; revision: number }>('d');
    await docs.upsertIfNewer({ _id: 'VICTIM-1', revision: 0 });
    await docs.upsertIfNewer({ _id: 'kept', revision: 0 });
    store.commit();
    await docs.deleteMany({ _id: 'VICTIM-1' });
    await store.close();

    const reopened = await SqliteReadModelStore.open({ file });
    await reopened.scrub();
    expect(bytesOf(file, 'VICTIM-1')).toBe(0);
    expect(await reopened.collection('d').get('kept')).not.toBeNull();
    await reopened.close();
  });

  it('given a current-file pointer that names a file elsewhere, then the start ignores it and keeps its own file', async () => {
    const file = fresh();
    const store = await SqliteReadModelStore.open({ file });
    await store.collection<{ _id: string; revision: number }>('d').upsertIfNewer({ _id: 'kept', revision: 0 });
    await store.close();
    const outside = join(mkdtempSync(join(tmpdir(), 'udp-rm-outside-')), 'victim.txt');
    writeFileSync(outside, 'not a database');
    writeFileSync(`${file}.current`, relative(dirname(file), outside));

    const reopened = await SqliteReadModelStore.open({ file });
    expect(await reopened.collection('d').get('kept')).not.toBeNull();
    expect(readFileSync(outside, 'utf8')).toBe('not a database');
    expect(existsSync(`${file}.current`)).toBe(false);
    await reopened.close();
  });

  it('given a write the disk refuses mid-batch, then the store is down and no checkpoint goes past the lost documents', async () => {
    const file = fresh();
    const store = await SqliteReadModelStore.open({ file });
    const docs = store.collection<{ _id: string; text: string; revision: number }>('d');
    await docs.upsertIfNewer({ _id: 'first', text: 'x', revision: 0 });
    await store.checkpoints().save('p', 1n);
    store.commit();
    store.database.pragma(`max_page_count = ${store.database.pragma('page_count', { simple: true }) as number}`);
    await docs.upsertIfNewer({ _id: 'a', text: 'y', revision: 0 }).catch(() => undefined);
    await store
      .checkpoints()
      .save('p', 2n)
      .catch(() => undefined);
    await expect(docs.upsertIfNewer({ _id: 'big', text: 'z'.repeat(200_000), revision: 0 })).rejects.toThrow();
    expect(await store.ping()).toBe(false);
    await expect(docs.upsertIfNewer({ _id: 'after', text: 'w', revision: 0 })).rejects.toThrow('read models unavailable');
    await store.close();

    const reopened = await SqliteReadModelStore.open({ file });
    expect(await reopened.checkpoints().load('p')).toBe(1n);
    expect(await reopened.collection('d').get('after')).toBeNull();
    await reopened.close();
  });
});
