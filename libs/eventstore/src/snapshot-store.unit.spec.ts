import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemorySnapshotStore, type SnapshotStore, SqliteSnapshotStore } from './snapshot-store';

const dir = mkdtempSync(join(tmpdir(), 'snapshots-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each([
  ['memory', () => new MemorySnapshotStore()],
  ['sqlite', () => new SqliteSnapshotStore(join(dir, `s-${Math.random()}.sqlite`))],
])('%s snapshot store', (_name, open: () => SnapshotStore) => {
  it("keeps the latest snapshot per stream, and deletes a stream's", async () => {
    const store = open();
    await store.write('a', { version: 1, revision: 3, lastEventId: 'e3', state: '{"n":1}' });
    await store.write('a', { version: 1, revision: 7, lastEventId: 'e7', state: '{"n":2}' });
    await store.write('b', { version: 2, revision: 0, lastEventId: 'x', state: '{}' });
    expect(await store.read('a')).toEqual({ version: 1, revision: 7, lastEventId: 'e7', state: '{"n":2}' });
    await store.delete('a');
    expect(await store.read('a')).toBeUndefined();
    expect((await store.read('b'))?.version).toBe(2);
    await store.close();
  });
});

it('a SQLite snapshot outlives the process that wrote it', async () => {
  const file = join(dir, 'reopen.sqlite');
  const first = new SqliteSnapshotStore(file);
  await first.write('a', { version: 1, revision: 9, lastEventId: 'e9', state: '[]' });
  await first.close();
  const second = new SqliteSnapshotStore(file);
  expect((await second.read('a'))?.revision).toBe(9);
  await second.close();
});
