import { MemoryReadModelStore } from './memory';
import { readModelContract } from './readmodel.contract';

const shared = new MemoryReadModelStore();
readModelContract('memory', async () => shared);

describe('memory read model: a sorted index and range filters', () => {
  it('finds with a paging cursor exactly what a scan finds, whatever the values', async () => {
    const indexed = new MemoryReadModelStore();
    const plain = new MemoryReadModelStore();
    await indexed.ensureIndex('c', { userId: 1, date: -1, item_id: 1 });
    const values: Array<number | string | null> = [5, 5, 5, 4, 3, 3, 2, 1, 0, -1, 'x', null, 2.5];
    for (const [i, date] of values.entries()) {
      for (const store of [indexed, plain])
        await store.collection('c').upsertIfNewer({ _id: `d${i}`, userId: 'u', date, item_id: `i${i % 4}`, revision: 1 } as never);
    }
    const filters = [
      { userId: 'u', $or: [{ date: { $lt: 5 } }, { date: 5, item_id: { $gt: 'i1' } }] },
      { userId: 'u', date: { $lte: 3, $gt: 0 } },
      { userId: 'u', date: { $gte: 2 }, $or: [{ date: { $lt: 4 } }, { item_id: 'i0' }] },
      { userId: 'u', date: 5 },
    ];
    for (const filter of filters) {
      const sort = { date: -1, item_id: 1 } as const;
      expect(await indexed.collection('c').find(filter as never, { sort })).toEqual(
        await plain.collection('c').find(filter as never, { sort }),
      );
    }
  });
});

describe('memory read model: index order through writes and reads in any interleaving', () => {
  it('finds in index order what a scan finds, whether a partition was read before the writes or not', async () => {
    const indexed = new MemoryReadModelStore();
    const plain = new MemoryReadModelStore();
    await indexed.ensureIndex('c', { userId: 1, date: -1, item_id: 1 });
    // A small deterministic generator: the same sequence of writes, deletions and reads every run.
    let seed = 42;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const sort = { date: -1, item_id: 1 } as const;
    for (let step = 0; step < 600; step++) {
      const userId = `u${next(3)}`;
      const op = next(10);
      const item = next(40);
      const date = next(17);
      for (const store of [indexed, plain]) {
        const c = store.collection('c');
        if (op < 7) await c.upsertIfNewer({ _id: `${userId}/${item}`, userId, date, item_id: `i${item}`, revision: step } as never);
        else if (op < 8) await c.updateMany({ userId, date: { $lt: 8 } } as never, { date: 20 } as never);
        else if (op < 9 && item < 4) await c.deleteMany({ userId } as never);
      }
      if (op === 9 || step % 7 === 0) {
        for (const u of ['u0', 'u1', 'u2']) {
          expect(await indexed.collection('c').find({ userId: u }, { sort, limit: 15 })).toEqual(
            await plain.collection('c').find({ userId: u }, { sort, limit: 15 }),
          );
        }
      }
    }
  });
});

describe('memory read model: documents holding JSON a client wrote', () => {
  it('keeps a field called __proto__ as data (a copy by assignment would set its prototype instead)', async () => {
    const store = new MemoryReadModelStore();
    const doc = JSON.parse('{"_id":"d1","revision":1,"value":{"__proto__":{"polluted":true},"b":2}}') as { _id: string; revision: number };
    await store.collection('c').upsertIfNewer(doc);
    const read = (await store.collection('c').get('d1')) as unknown as { value: object };
    expect(JSON.stringify(read.value)).toBe('{"__proto__":{"polluted":true},"b":2}');
    expect(Object.getPrototypeOf(read.value)).toBe(Object.prototype);
  });
});
