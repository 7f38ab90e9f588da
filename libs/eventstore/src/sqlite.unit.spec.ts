import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { eventStoreContract } from './eventstore.contract';
import { SqliteEventStore } from './sqlite';

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
      store.appendToStream(`g-${i % 10}`, [{ id: randomUUID(), type: 'A', data: { i } }], { expectedRevision: i < 10 ? 'no_stream' : 'any' }),
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
