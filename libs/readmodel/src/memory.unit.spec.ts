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
