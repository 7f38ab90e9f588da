import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readModelContract } from './readmodel.contract';
import { SqliteReadModelStore } from './sqlite';

readModelContract('sqlite', () => SqliteReadModelStore.open({ file: join(mkdtempSync(join(tmpdir(), 'udp-rm-')), 'read-models.sqlite') }));

describe('SQLite read models rebuilt from nothing', () => {
  const indexesOf = (file: string) =>
    new Database(file, { readonly: true })
      .prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'rm_notes__%' AND name NOT LIKE '%__key'")
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
});

describe('SQLite read models: erasure and failures', () => {
  const fresh = () => join(mkdtempSync(join(tmpdir(), 'udp-rm-')), 'read-models.sqlite');
  const bytesOf = (file: string, needle: string) =>
    ['', '-wal'].reduce((n, suffix) => {
      const buffer = existsSync(`${file}${suffix}`) ? readFileSync(`${file}${suffix}`) : Buffer.alloc(0);
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
