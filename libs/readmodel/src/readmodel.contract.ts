import { randomUUID } from 'node:crypto';
import { type ReadModelStore, applyAndSave, param } from './port';

interface Entry {
  _id: string;
  userId: string;
  itemId: string;
  date: number;
  deleted: boolean;
  note?: string;
  revision: number;
}

/** The behaviour every read-model adapter must have (memory and MongoDB/FerretDB). */
export interface ContractOptions {
  /**
   * False for a server whose conditional writes are not atomic (FerretDB 1.x: tools/servers/README.md, "Limits of
   * FerretDB"): the case of concurrent writers is then reported skipped, with that reason, instead of failing now and
   * then.
   */
  atomicConditionalWrites?: boolean;
}

export function readModelContract(adapter: string, open: () => Promise<ReadModelStore>, options: ContractOptions = {}) {
  const concurrently =
    options.atomicConditionalWrites === false
      ? (title: string, test: () => Promise<void>) =>
          it.skip(`${title}: skipped, this server's conditional writes are not atomic (FerretDB 1.x)`, test)
      : it;
  describe(`ReadModelStore contract: ${adapter}`, () => {
    let store: ReadModelStore;
    let name: string;
    const doc = (userId: string, itemId: string, date: number, revision = 1, deleted = false): Entry => ({
      _id: `${userId}/${itemId}`,
      userId,
      itemId,
      date,
      deleted,
      revision,
    });

    beforeEach(async () => {
      store = await open();
      name = `contract_${randomUUID().replace(/-/g, '')}`;
      await store.ensureIndex(name, { userId: 1, date: -1, itemId: 1 });
    });
    afterEach(async () => {
      await store.collection<Entry>(name).deleteMany({});
      await store.close();
    });

    it('stores, reads and replaces by revision only when newer (idempotent replay)', async () => {
      const c = store.collection<Entry>(name);
      expect(await c.upsertIfNewer(doc('u1', 'a', 10, 1))).toBe(true);
      expect(await c.upsertIfNewer({ ...doc('u1', 'a', 99, 1) })).toBe(false);
      expect(await c.upsertIfNewer({ ...doc('u1', 'a', 5, 0) })).toBe(false);
      expect((await c.get('u1/a'))?.date).toBe(10);
      expect(await c.upsertIfNewer({ ...doc('u1', 'a', 20, 2), note: 'x' })).toBe(true);
      expect(await c.get('u1/a')).toEqual({ ...doc('u1', 'a', 20, 2), note: 'x' });
      expect(await c.get('missing')).toBeNull();
    });

    it('reads many by id in one call: those stored, a missing one left out', async () => {
      const c = store.collection<Entry>(name);
      await c.upsertManyIfNewer([doc('u1', 'a', 10, 1), doc('u1', 'b', 20, 2), doc('u2', 'a', 30, 3)]);
      const found = await c.getMany(['u1/b', 'missing', 'u2/a', 'u1/a']);
      expect(found.sort((x, y) => x.date - y.date)).toEqual([doc('u1', 'a', 10, 1), doc('u1', 'b', 20, 2), doc('u2', 'a', 30, 3)]);
      expect(await c.getMany([])).toEqual([]);
      expect(await c.getMany(['missing'])).toEqual([]);
    });

    it('writes many in one call, each only when newer than the stored one, answering which were written', async () => {
      const c = store.collection<Entry>(name);
      expect(await c.upsertManyIfNewer([doc('u1', 'a', 10, 1), doc('u1', 'b', 20, 5)])).toEqual([true, true]);
      // A mix in one call: newer, older, new.
      expect(await c.upsertManyIfNewer([doc('u1', 'a', 11, 2), doc('u1', 'b', 98, 4), doc('u1', 'c', 30, 1)])).toEqual([true, false, true]);
      // The same revisions again (a replayed batch): nothing written.
      expect(await c.upsertManyIfNewer([doc('u1', 'a', 12, 2), doc('u1', 'b', 99, 5), doc('u1', 'c', 31, 1)])).toEqual([
        false,
        false,
        false,
      ]);
      expect(await c.upsertManyIfNewer([])).toEqual([]);
      const all = await c.find({ userId: 'u1' }, { sort: { itemId: 1 } });
      expect(all).toEqual([doc('u1', 'a', 11, 2), doc('u1', 'b', 20, 5), doc('u1', 'c', 30, 1)]);
      // What one call wrote is found by the queries, as one write at a time would be.
      expect(await c.count({ userId: 'u1', date: { $gte: 20 } })).toBe(2);
    });

    concurrently('keeps the newest of concurrent bulk writes of the same documents, each written exactly once per revision', async () => {
      const c = store.collection<Entry>(name);
      const ids = Array.from({ length: 20 }, (_, i) => `i${i}`);
      // Five callers at once: caller k writes every document at revision k + 1, and all write `same` at revision 7.
      const answers = await Promise.all(
        [0, 1, 2, 3, 4].map((k) => c.upsertManyIfNewer([...ids.map((item) => doc('u1', item, k, k + 1)), doc('u1', 'same', 100 + k, 7)])),
      );
      for (const item of ids) expect(await c.get(`u1/${item}`)).toEqual(doc('u1', item, 4, 5));
      // The newest revision of each document was written whatever the interleaving.
      expect(answers[4].slice(0, ids.length).every(Boolean)).toBe(true);
      // Of the writes of one revision, one only.
      expect(answers.filter((written) => written[ids.length]).length).toBe(1);
      expect((await c.get('u1/same'))?.revision).toBe(7);
    });

    it('finds with equality, ranges, $in, $or, sort and limit as MongoDB does', async () => {
      const c = store.collection<Entry>(name);
      for (const [item, date, deleted] of [
        ['a', 10, false],
        ['b', 20, false],
        ['c', 20, true],
        ['d', 30, false],
      ] as const) {
        await c.upsertIfNewer(doc('u1', item, date, 1, deleted));
      }
      await c.upsertIfNewer(doc('u2', 'a', 15));
      const ids = async (filter: Parameters<typeof c.find>[0], limit?: number) =>
        (await c.find(filter, { sort: { date: -1, itemId: 1 }, limit })).map((d) => d.itemId);

      expect(await ids({ userId: 'u1' })).toEqual(['d', 'b', 'c', 'a']);
      expect(await ids({ userId: 'u1', deleted: false })).toEqual(['d', 'b', 'a']);
      expect(await ids({ userId: 'u1', date: { $gte: 20, $lt: 30 } })).toEqual(['b', 'c']);
      expect(await ids({ userId: 'u1', itemId: { $in: ['a', 'd', 'zz'] } })).toEqual(['d', 'a']);
      // A value named twice finds its documents once; the limit applies to the whole answer, in its order.
      expect(await ids({ userId: 'u1', itemId: { $in: ['a', 'c', 'a', 'b'] } }, 2)).toEqual(['b', 'c']);
      expect(await ids({ date: { $in: [20, 10] }, userId: 'u1' })).toEqual(['b', 'c', 'a']);
      expect(await ids({ userId: 'u1', $or: [{ date: { $lt: 20 } }, { date: 20, itemId: { $gt: 'b' } }] })).toEqual(['c', 'a']);
      // Two disjunctions at once need $and (the history's date cursor and its change-order cursor).
      expect(
        await ids({ userId: 'u1', $and: [{ $or: [{ date: 10 }, { date: 20 }] }, { $or: [{ itemId: 'a' }, { itemId: 'c' }] }] }),
      ).toEqual(['c', 'a']);
      expect(await ids({ userId: 'u1' }, 2)).toEqual(['d', 'b']);
      expect(await ids({ userId: 'u1', itemId: { $ne: 'a' } })).toEqual(['d', 'b', 'c']);
      expect(await c.count({ userId: 'u1', deleted: false })).toBe(3);
      expect(await ids({ userId: 'nobody' })).toEqual([]);
    });

    it('compares as MongoDB does: a missing field is null, ranges compare one type, a number is no boolean', async () => {
      const c = store.collection<Entry & { flag?: boolean | number; label?: string | number }>(name);
      await c.upsertIfNewer({ ...doc('u1', 'a', 1), flag: true, label: 'x' });
      await c.upsertIfNewer({ ...doc('u1', 'b', 2), flag: 1, label: 5 });
      await c.upsertIfNewer({ ...doc('u1', 'c', 3) });
      const ids = async (filter: Parameters<typeof c.find>[0]) => (await c.find(filter, { sort: { itemId: 1 } })).map((d) => d.itemId);
      const expectations = async () => {
        expect(await ids({ userId: 'u1', note: null })).toEqual(['a', 'b', 'c']);
        expect(await ids({ userId: 'u1', label: null })).toEqual(['c']);
        expect(await ids({ userId: 'u1', label: { $ne: null } })).toEqual(['a', 'b']);
        expect(await ids({ userId: 'u1', label: { $ne: 'x' } })).toEqual(['b', 'c']);
        expect(await ids({ userId: 'u1', flag: true })).toEqual(['a']);
        expect(await ids({ userId: 'u1', flag: 1 })).toEqual(['b']);
        expect(await ids({ userId: 'u1', flag: { $gte: 0 } })).toEqual(['b']);
        expect(await ids({ userId: 'u1', label: { $gt: 'a' } })).toEqual(['a']);
        expect(await ids({ userId: 'u1', label: { $gte: 0 } })).toEqual(['b']);
        expect(await ids({ userId: 'u1', label: { $in: [5, 'nothing', null] } })).toEqual(['b', 'c']);
        // A long list, as a history clear names every item it clears.
        const many = Array.from({ length: 40_000 }, (_, i) => `item${i}`);
        expect(await ids({ userId: 'u1', itemId: { $in: [...many, 'c'] } })).toEqual(['c']);
      };
      await expectations();
      // The same with the fields in an index declared after the documents were stored.
      await store.ensureIndex(name, { flag: 1, label: 1 });
      await expectations();
      expect(await ids({ flag: true })).toEqual(['a']);
      expect(await c.updateMany({ userId: 'u1', itemId: 'c' }, { flag: false })).toBe(1);
      expect(await ids({ flag: false })).toEqual(['c']);
      expect(await ids({ userId: 'u1', flag: { $ne: false } })).toEqual(['a', 'b']);
    });

    it('updates and deletes many by filter', async () => {
      const c = store.collection<Entry>(name);
      await c.upsertIfNewer(doc('u1', 'a', 10, 1));
      await c.upsertIfNewer(doc('u1', 'b', 10, 5));
      await c.upsertIfNewer(doc('u2', 'a', 10, 1));
      expect(await c.updateMany({ userId: 'u1', revision: { $lt: 3 } }, { deleted: true, revision: 3 })).toBe(1);
      expect((await c.get('u1/a'))?.deleted).toBe(true);
      expect((await c.get('u1/b'))?.deleted).toBe(false);
      expect(await c.deleteMany({ userId: 'u1' })).toBe(2);
      expect(await c.find({ userId: 'u1' })).toEqual([]);
      expect(await c.count({})).toBe(1);
    });

    it('keeps the requested order when updates move documents, with and without a matching index', async () => {
      const c = store.collection<Entry>(name);
      for (let i = 0; i < 20; i++) await c.upsertIfNewer(doc('u1', `i${String(i).padStart(2, '0')}`, i % 5, 1));
      await c.upsertIfNewer(doc('u1', 'i03', 100, 2));
      await c.updateMany({ userId: 'u1', itemId: { $in: ['i07', 'i11'] } }, { date: 50, revision: 3 });
      await c.deleteMany({ userId: 'u1', itemId: 'i00' });
      const all = await c.find({ userId: 'u1' }, { sort: { date: -1, itemId: 1 } });
      const expected = [...all].sort((a, b) => b.date - a.date || (a.itemId < b.itemId ? -1 : 1));
      expect(all.map((d) => d.itemId)).toEqual(expected.map((d) => d.itemId));
      expect(all.slice(0, 3).map((d) => [d.itemId, d.date])).toEqual([
        ['i03', 100],
        ['i07', 50],
        ['i11', 50],
      ]);
      expect(all).toHaveLength(19);
      const page = await c.find({ userId: 'u1', date: { $lt: 50 } }, { sort: { date: -1, itemId: 1 }, limit: 4 });
      expect(page.map((d) => d.itemId)).toEqual(['i04', 'i09', 'i14', 'i19']);
      const ascending = await c.find({ userId: 'u1' }, { sort: { date: 1, itemId: -1 }, limit: 2 });
      expect(ascending.map((d) => d.itemId)).toEqual(['i15', 'i10']);
    });

    it("erases one user's documents: none of them is found by any query, others untouched, a fresh start is stored", async () => {
      const c = store.collection<Entry>(name);
      for (const [user, item, date] of [
        ['gone', 'a', 1],
        ['gone', 'b', 2],
        ['gone-too', 'c', 3],
        ['stay', 'a', 4],
      ] as const) {
        await c.upsertIfNewer(doc(user, item, date, 7));
      }
      // Enough documents for an adapter's bulk path, interleaved in date with the others.
      for (let i = 0; i < 100; i++) await c.upsertIfNewer(doc('gone', `bulk${i}`, i % 5, 1));
      expect(await c.deleteMany({ userId: 'gone' })).toBe(102);
      expect(await c.deleteMany({ userId: 'gone' })).toBe(0);
      expect(await c.find({ userId: 'gone' }, { sort: { date: -1 } })).toEqual([]);
      expect([await c.get('gone/a'), await c.count({ userId: 'gone' })]).toEqual([null, 0]);
      expect((await c.find({}, { sort: { date: 1 } })).map((d) => d._id)).toEqual(['gone-too/c', 'stay/a']);
      // The user writes again: the stream starts afresh, so its revisions start low again.
      expect(await c.upsertIfNewer(doc('gone', 'a', 9, 0))).toBe(true);
      expect((await c.find({ userId: 'gone' })).map((d) => [d._id, d.revision])).toEqual([['gone/a', 0]]);
    });

    it('hands out documents read-only that a later change leaves as they were', async () => {
      const c = store.collection<Entry>(name);
      await c.upsertIfNewer(doc('u1', 'a', 10, 1));
      await c.upsertIfNewer(doc('u1', 'b', 20, 1));
      const [first] = await c.find({ userId: 'u1' }, { sort: { date: -1 }, limit: 1, readOnly: true });
      expect(first).toEqual(doc('u1', 'b', 20, 1));
      await c.upsertIfNewer({ ...doc('u1', 'b', 30, 2), note: 'changed' });
      await c.updateMany({ userId: 'u1' }, { deleted: true });
      expect(first).toEqual(doc('u1', 'b', 20, 1));
      expect(await c.find({ userId: 'u1' }, { sort: { date: -1 }, readOnly: true })).toEqual([
        { ...doc('u1', 'b', 30, 2, true), note: 'changed' },
        doc('u1', 'a', 10, 1, true),
      ]);
    });

    it('runs a prepared find with its parameters, answering the selected fields in order (a missing one as null)', async () => {
      const c = store.collection<Entry>(name);
      for (const [item, date, deleted] of [
        ['a', 10, false],
        ['b', 20, false],
        ['c', 20, true],
        ['d', 30, false],
      ] as const) {
        await c.upsertIfNewer({ ...doc('u1', item, date, 1, deleted), ...(item !== 'c' && { note: `note ${item}` }) });
      }
      await c.upsertIfNewer({ ...doc('u2', 'a', 15), note: 'other user' });
      const order = { date: -1, itemId: 1 } as const;
      const live = c.prepareFind({ userId: param('user', 'string'), deleted: false }, { sort: order, select: ['note'] });
      expect(await live({ user: 'u1' })).toEqual([{ note: 'note d' }, { note: 'note b' }, { note: 'note a' }]);
      expect(await live({ user: 'u1' }, 2)).toEqual([{ note: 'note d' }, { note: 'note b' }]);
      expect(await live({ user: 'u2' })).toEqual([{ note: 'other user' }]);
      expect(await live({ user: 'nobody' })).toEqual([]);
      // A date cursor as the history's pages have it, and each operator with a parameter.
      const before = c.prepareFind(
        {
          userId: param('user', 'string'),
          $or: [
            { date: { $lt: param('before', 'number') } },
            { date: param('before', 'number'), itemId: { $gt: param('after', 'string') } },
          ],
        },
        { sort: order, select: ['itemId', 'deleted', 'note'] },
      );
      expect(await before({ user: 'u1', before: 20, after: 'b' })).toEqual([
        { itemId: 'c', deleted: true, note: null },
        { itemId: 'a', deleted: false, note: 'note a' },
      ]);
      const ranges = c.prepareFind(
        {
          userId: param('user', 'string'),
          date: { $gte: param('from', 'number'), $lte: param('to', 'number') },
          itemId: { $ne: param('not', 'string') },
        },
        { sort: order, select: ['itemId'] },
      );
      expect(await ranges({ user: 'u1', from: 20, to: 30, not: 'b' })).toEqual([{ itemId: 'd' }, { itemId: 'c' }]);
      const flagged = c.prepareFind({ deleted: param('deleted', 'boolean') }, { sort: order, select: ['_id'] });
      expect(await flagged({ deleted: true })).toEqual([{ _id: 'u1/c' }]);
      // A parameter of another type than declared is refused, not compared as MongoDB would not.
      await expect(live({ user: 5 })).rejects.toThrow(/user/);
      // A prepared find sees later changes.
      await c.upsertIfNewer({ ...doc('u1', 'a', 40, 2), note: 'note a again' });
      await c.updateMany({ userId: 'u1', itemId: 'd' }, { deleted: true, revision: 3 });
      expect(await live({ user: 'u1' })).toEqual([{ note: 'note a again' }, { note: 'note b' }]);
      await c.deleteMany({ userId: 'u1' });
      expect(await live({ user: 'u1' })).toEqual([]);
    });

    it('keeps checkpoints per projection', async () => {
      const checkpoints = store.checkpoints();
      const projection = `p_${randomUUID()}`;
      expect(await checkpoints.load(projection)).toBeNull();
      await checkpoints.save(projection, 42n);
      await checkpoints.save(projection, 18446744073709551615n);
      expect(await checkpoints.load(projection)).toBe(18446744073709551615n);
    });

    it("applies a batch and saves its checkpoint as one where the store can: both kept, the batch's reads see its writes", async () => {
      const c = store.collection<Entry>(name);
      const checkpoints = store.checkpoints();
      const projection = `p_${randomUUID()}`;
      await c.upsertIfNewer(doc('u1', 'a', 10, 1));
      // Given a batch that writes, then reads what it wrote (one by one, as a projection's `apply` does)
      const seen: Array<Entry | null> = [];
      const answer = await applyAndSave(
        checkpoints,
        async () => {
          await c.upsertManyIfNewer([doc('u1', 'a', 11, 2), doc('u1', 'b', 20, 1)]);
          seen.push(await c.get('u1/a'), await c.get('u1/b'));
          seen.push(...(await c.find({ userId: 'u1' }, { sort: { itemId: 1 } })));
          expect(await c.count({ userId: 'u1' })).toBe(2);
        },
        async () => {
          await checkpoints.save(projection, 7n);
          return 'saved';
        },
      );
      // Then its reads saw its own writes, both are kept, and the save's answer is handed back
      expect(seen).toEqual([doc('u1', 'a', 11, 2), doc('u1', 'b', 20, 1), doc('u1', 'a', 11, 2), doc('u1', 'b', 20, 1)]);
      expect(answer).toBe('saved');
      expect(await checkpoints.load(projection)).toBe(7n);
      expect(await c.find({ userId: 'u1' }, { sort: { itemId: 1 } })).toEqual([doc('u1', 'a', 11, 2), doc('u1', 'b', 20, 1)]);
    });

    it('saves no checkpoint for a batch that fails, and keeps none of its writes where the store applies it as one', async () => {
      const c = store.collection<Entry>(name);
      const checkpoints = store.checkpoints();
      const projection = `p_${randomUUID()}`;
      await checkpoints.save(projection, 5n);
      let saved = false;
      // When the batch fails after a write
      await expect(
        applyAndSave(
          checkpoints,
          async () => {
            await c.upsertIfNewer(doc('u2', 'a', 10, 1));
            throw new Error('the projection failed');
          },
          async () => {
            saved = true;
            await checkpoints.save(projection, 9n);
          },
        ),
      ).rejects.toThrow('the projection failed');
      // Then the checkpoint stays; the write is undone where the store is atomic (else applied again by the retry)
      expect(saved).toBe(false);
      expect(await checkpoints.load(projection)).toBe(5n);
      expect(await c.get('u2/a')).toEqual(checkpoints.atomically ? null : doc('u2', 'a', 10, 1));
      // When the save fails after the batch's writes and its own
      await expect(
        applyAndSave(
          checkpoints,
          () => c.upsertIfNewer(doc('u2', 'b', 10, 1)).then(() => undefined),
          async () => {
            await checkpoints.save(projection, 9n);
            throw new Error('the save failed');
          },
        ),
      ).rejects.toThrow('the save failed');
      // Then, where the store is atomic, neither is kept
      if (checkpoints.atomically) {
        expect(await checkpoints.load(projection)).toBe(5n);
        expect(await c.get('u2/b')).toBeNull();
      } else {
        expect(await checkpoints.load(projection)).toBe(9n);
        expect(await c.get('u2/b')).toEqual(doc('u2', 'b', 10, 1));
      }
    });

    it('answers ping', async () => {
      expect(await store.ping()).toBe(true);
    });
  });
}
