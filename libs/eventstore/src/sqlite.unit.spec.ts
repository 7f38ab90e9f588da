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
