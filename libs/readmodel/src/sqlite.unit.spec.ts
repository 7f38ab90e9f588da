import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
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
