import { randomUUID } from 'node:crypto';
import { reportSkipped, waitUntil } from '@udp/test-kit';
import { StoreUnavailableError } from '@udp/eventstore';
import { MemoryReadModelStore } from './memory';
import { param } from './port';
import { PostgresReadModelStore } from './postgres';
import { orderSql, whereSql } from './postgres-filter';
import { readModelContract } from './readmodel.contract';

/**
 * PostgreSQL: POSTGRES_URL (tools/servers/with-servers.sh starts a server and sets it); skipped, saying so, without it.
 * The run's collections are in a schema of its own, dropped at the end.
 */
const url = process.env.POSTGRES_URL;
const schema = `udp_contract_${randomUUID().replace(/-/g, '').slice(0, 12)}`;

if (!url) {
  reportSkipped('ReadModelStore contract: postgresql', 'POSTGRES_URL is unset (tools/servers/with-servers.sh sets it)');
} else {
  afterAll(async () => {
    const { Client } = require('pg') as typeof import('pg');
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    } finally {
      await client.end();
    }
  });

  readModelContract('postgresql', () => PostgresReadModelStore.connect(url, schema));

  describe('PostgresReadModelStore', () => {
    const { Client } = require('pg') as typeof import('pg');
    let store: PostgresReadModelStore;
    let client: import('pg').Client;
    let name: string;
    beforeEach(async () => {
      store = await PostgresReadModelStore.connect(url, schema);
      client = new Client({ connectionString: url });
      await client.connect();
      name = `pg_${randomUUID().replace(/-/g, '')}`;
    });
    afterEach(async () => {
      await client.end();
      await store.close();
    });

    interface Entry {
      _id: string;
      userId: string;
      itemId: string;
      date: number;
      revision: number;
    }
    const plan = async (sql: string, params: unknown[]) =>
      (await client.query(`EXPLAIN (FORMAT JSON) ${sql}`, params)).rows[0]['QUERY PLAN'][0].Plan as PlanNode;
    interface PlanNode {
      'Node Type': string;
      'Index Name'?: string;
      Plans?: PlanNode[];
    }
    const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];

    it("reads a user's page in the index's order: an index scan, no sort, for a find and a prepared find's plans", async () => {
      const c = store.collection<Entry>(name);
      await store.ensureIndex(name, { userId: 1, date: -1, itemId: 1 });
      for (let u = 0; u < 40; u++)
        await c.upsertManyIfNewer(
          Array.from({ length: 100 }, (_, i) => ({
            _id: `u${u}/i${i}`,
            userId: `u${u}`,
            itemId: `i${i}`,
            date: i % 17,
            deleted: i % 10 === 0,
            revision: 1,
          })),
        );
      const cursor = { userId: 'u7', $or: [{ date: { $lt: 9 } }, { date: 9, itemId: { $gt: 'i50' } }] };
      const sort = { date: -1, itemId: 1 } as const;
      // Run once each: the fields they name get their statistics, which the ANALYZE fills (autovacuum's, in service).
      const page = await c.find(cursor, { sort, limit: 20 });
      const live = c.prepareFind({ userId: param('user', 'string'), deleted: false }, { sort, select: ['itemId'] });
      const livePage = await live({ user: 'u7' }, 20);
      await client.query(`ANALYZE ${schema}."${name}"`);
      const table = `${schema}."${name}"`;
      const where = whereSql(cursor);
      const order = orderSql(sort);
      const found = nodes(await plan(`SELECT doc FROM ${table} WHERE ${where.sql}${order} LIMIT 20`, where.params));
      expect(found.map((n) => n['Node Type'])).not.toContain('Sort');
      expect(found.some((n) => /Index/.test(n['Node Type']) && n['Index Name']?.startsWith('i_'))).toBe(true);
      // The prepared find's statement as PostgreSQL plans it for these parameters, and once for any (a generic plan).
      const prepared = whereSql({ userId: param('user', 'string'), deleted: false });
      for (const mode of ['force_custom_plan', 'force_generic_plan']) {
        await client.query(`SET plan_cache_mode = ${mode}`);
        await client.query(`PREPARE page AS SELECT doc->'itemId' FROM ${table} WHERE ${prepared.sql}${order} LIMIT 20`);
        const chosen = (await client.query(`EXPLAIN (FORMAT JSON) EXECUTE page('u7', 'false')`)).rows[0]['QUERY PLAN'][0].Plan as PlanNode;
        await client.query('DEALLOCATE page');
        expect([mode, nodes(chosen).map((n) => n['Node Type'])]).not.toContainEqual(expect.arrayContaining(['Sort']));
      }
      // And the answers are the memory store's.
      const memory = new MemoryReadModelStore();
      const m = memory.collection<Entry & { deleted: boolean }>(name);
      await m.upsertManyIfNewer((await c.find({})) as Array<Entry & { deleted: boolean }>);
      expect(page).toEqual(await m.find(cursor, { sort, limit: 20 }));
      expect(livePage).toEqual((await m.find({ userId: 'u7', deleted: false }, { sort, limit: 20 })).map((d) => ({ itemId: d.itemId })));
      expect(livePage).toHaveLength(20);
    });

    it("sorts in MongoDB's order of types (null and missing, numbers, strings, booleans), strings byte by byte", async () => {
      const c = store.collection<{ _id: string; v?: unknown; revision: number }>(name);
      const values: unknown[] = [true, 'b', 'a', 10, 2, null, undefined, 'B', 'é', 'z', false, -1.5];
      await c.upsertManyIfNewer(
        values.map((v, i) => ({ _id: `d${String(i).padStart(2, '0')}`, ...(v !== undefined && { v }), revision: 1 })),
      );
      const ascending = (await c.find({}, { sort: { v: 1, _id: 1 } })).map((d) => d.v ?? null);
      expect(ascending).toEqual([null, null, -1.5, 2, 10, 'B', 'a', 'b', 'z', 'é', false, true]);
      const descending = (await c.find({}, { sort: { v: -1, _id: 1 } })).map((d) => d.v ?? null);
      expect(descending).toEqual([true, false, 'é', 'z', 'b', 'a', 'B', 10, 2, -1.5, null, null]);
      expect((await c.find({ v: { $gt: 'a' } }, { sort: { v: 1 } })).map((d) => d.v)).toEqual(['b', 'z', 'é']);
      expect((await c.find({ v: { $lt: 5 } }, { sort: { v: 1 } })).map((d) => d.v)).toEqual([-1.5, 2]);
      expect((await c.find({ v: { $gte: false } }, { sort: { v: 1 } })).map((d) => d.v)).toEqual([false, true]);
    });

    it('leaves no row of the deleted documents in the table (only old row versions until VACUUM)', async () => {
      const c = store.collection<Entry>(name);
      await c.upsertManyIfNewer(
        Array.from({ length: 50 }, (_, i) => ({ _id: `gone/i${i}`, userId: 'gone', itemId: `i${i}`, date: i, revision: 1 })),
      );
      await c.upsertIfNewer({ _id: 'stay/a', userId: 'stay', itemId: 'a', date: 1, revision: 1 });
      expect(await c.deleteMany({ userId: 'gone' })).toBe(50);
      const { rows } = await client.query(`SELECT id FROM ${schema}."${name}"`);
      expect(rows).toEqual([{ id: 'stay/a' }]);
    });

    it('makes a collection and its indexes once when replicas start together, and drops an index', async () => {
      const others = await Promise.all([1, 2, 3].map(() => PostgresReadModelStore.connect(url, schema)));
      try {
        await Promise.all(
          [store, ...others].map(async (s) => {
            await s.ensureIndex(name, { userId: 1, date: -1 });
            await s.collection<Entry>(name).upsertIfNewer({ _id: 'u1/a', userId: 'u1', itemId: 'a', date: 1, revision: 1 });
          }),
        );
      } finally {
        for (const s of others) await s.close();
      }
      const indexes = async () =>
        (await client.query('SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2', [schema, name])).rows.length;
      // The primary key's and the declared one.
      expect(await indexes()).toBe(2);
      await store.dropIndex(name, { userId: 1, date: -1 });
      expect(await indexes()).toBe(1);
      expect(await store.collection<Entry>(name).find({ userId: 'u1' }, { sort: { date: -1 } })).toHaveLength(1);
    });

    it("keeps the event store's 128-bit positions as checkpoints", async () => {
      const position = (123456789n << 64n) | 42n;
      await store.checkpoints().save(`p_${name}`, position);
      expect(await store.checkpoints().load(`p_${name}`)).toBe(position);
    });

    it('refuses a field name that is not a plain identifier (it is written into the SQL)', async () => {
      const c = store.collection<Entry>(name);
      await expect(c.find({ "a'; DROP TABLE x; --": 1 })).rejects.toThrow(/field name/);
      await expect(store.ensureIndex(name, { 'a b': 1 })).rejects.toThrow(/field name/);
    });

    it('reads documents asked for by id at once together, each answered its own (null when absent)', async () => {
      const entries = store.collection<Entry>(name);
      const docs = Array.from({ length: 9 }, (_, i) => ({ _id: `e${i}`, userId: `u${i % 2}`, itemId: `i${i}`, date: i, revision: 1 }));
      await entries.upsertManyIfNewer(docs.filter((_, i) => i % 3 !== 0));
      const ids = [...docs.map((d) => d._id), 'e1', 'missing'];
      const together = await Promise.all(ids.map((id) => entries.get(id)));
      expect(together).toEqual(ids.map((id) => docs.find((d, i) => d._id === id && i % 3 !== 0) ?? null));
    });

    const entry = (id: string, revision: number): Entry => ({ _id: id, userId: id.split('/')[0], itemId: id, date: 1, revision });

    it("leaves neither the batch's documents nor its checkpoint when the checkpoint's statement fails", async () => {
      const c = store.collection<Entry>(name);
      const checkpoints = store.checkpoints();
      const projection = `p_${name}`;
      await checkpoints.save(projection, 5n);
      // Given a checkpoints table that refuses this projection's next position: a failure after the batch's documents
      const constraint = `refuse_${name}`;
      await client.query(`ALTER TABLE ${schema}._checkpoints ADD CONSTRAINT ${constraint} CHECK (name <> '${projection}' OR position < 6)`);
      try {
        // When a batch writes its documents, then saves its checkpoint, as one
        await expect(
          checkpoints.atomically!(
            () => c.upsertManyIfNewer([entry('u/a', 1), entry('u/b', 1)]).then(() => undefined),
            () => checkpoints.save(projection, 9n),
          ),
        ).rejects.toMatchObject({ code: '23514' });
      } finally {
        await client.query(`ALTER TABLE ${schema}._checkpoints DROP CONSTRAINT ${constraint}`);
      }
      // Then neither is stored (read on a connection of its own), and the store is up (the statement's own fault)
      expect((await client.query(`SELECT id FROM ${schema}."${name}"`)).rows).toEqual([]);
      expect((await client.query(`SELECT position::text FROM ${schema}._checkpoints WHERE name = $1`, [projection])).rows).toEqual([
        { position: '5' },
      ]);
      expect(await store.ping()).toBe(true);
      // And the next unit stores both
      await checkpoints.atomically!(
        () => c.upsertManyIfNewer([entry('u/a', 1), entry('u/b', 1)]).then(() => undefined),
        () => checkpoints.save(projection, 9n),
      );
      expect((await client.query(`SELECT id FROM ${schema}."${name}" ORDER BY id`)).rows).toEqual([{ id: 'u/a' }, { id: 'u/b' }]);
      expect(await checkpoints.load(projection)).toBe(9n);
    });

    it("keeps a unit's writes from every other reader until it commits, and reads them on its own connection", async () => {
      const c = store.collection<Entry>(name);
      const checkpoints = store.checkpoints();
      await c.upsertIfNewer(entry('u/a', 1));
      let wrote!: () => void;
      const written = new Promise<void>((resolve) => (wrote = resolve));
      let looked!: () => void;
      const seen = new Promise<void>((resolve) => (looked = resolve));
      // Given readers outside the unit that look while it is open: by id through the store (batched together) and on a
      // connection of their own
      const outside = (async () => {
        await written;
        const gets = await Promise.all(['u/a', 'u/b', 'u/a', 'u/b', 'u/a'].map((id) => c.get(id)));
        const { rows } = await client.query(`SELECT id, revision FROM ${schema}."${name}" ORDER BY id`);
        looked();
        return { gets: gets.map((doc) => doc?.revision ?? null), rows };
      })();
      // When a unit writes and reads
      await checkpoints.atomically!(
        async () => {
          expect((await c.get('u/a'))?.revision).toBe(1);
          await c.upsertManyIfNewer([entry('u/a', 2), entry('u/b', 1)]);
          wrote();
          await seen;
          // Then inside it, its own writes: by id (several at once) and by query
          expect((await Promise.all([c.get('u/a'), c.get('u/b'), c.get('u/c')])).map((doc) => doc?.revision ?? null)).toEqual([2, 1, null]);
          expect((await c.find({ userId: 'u' }, { sort: { itemId: 1 } })).map((doc) => doc.revision)).toEqual([2, 1]);
        },
        () => checkpoints.save(`p_${name}`, 1n),
      );
      // And outside it, none of them until it committed
      expect(await outside).toEqual({ gets: [1, null, 1, null, 1], rows: [{ id: 'u/a', revision: 1 }] });
      expect((await Promise.all([c.get('u/a'), c.get('u/b')])).map((doc) => doc?.revision)).toEqual([2, 1]);
    });

    it('saves alone, with no transaction, for a unit that wrote nothing (a publisher), and in its transaction otherwise', async () => {
      const checkpoints = store.checkpoints();
      // A statement alone in its transaction starts it: the transaction's time is the statement's.
      const alone = async () => (await store.query<{ alone: boolean }>('SELECT now() = statement_timestamp() AS alone')).rows[0].alone;
      const c = store.collection<Entry>(name);
      expect(await checkpoints.atomically!(async () => void (await c.get('u/a')), alone)).toBe(true);
      expect(await checkpoints.atomically!(() => c.upsertIfNewer(entry('u/a', 1)).then(() => undefined), alone)).toBe(false);
      expect(await alone()).toBe(true);
    });

    it('fails a unit whose connection the server ends between its statements (a restart), and keeps none of it', async () => {
      const c = store.collection<Entry>(name);
      const checkpoints = store.checkpoints();
      // When the server ends the unit's connection after its first write, while the unit holds it between statements
      const failed = checkpoints.atomically!(
        async () => {
          await c.upsertIfNewer(entry('u/a', 1));
          const [{ pid }] = (await store.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
          await client.query('SELECT pg_terminate_backend($1)', [pid]);
          await waitUntil(async () => (await client.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rows.length === 0);
          await c.upsertIfNewer(entry('u/b', 1));
        },
        () => checkpoints.save(`p_${name}`, 1n),
      );
      // Then the unit fails as the store being unavailable (and the process goes on: no unhandled error event)
      await expect(failed).rejects.toBeInstanceOf(StoreUnavailableError);
      expect((await client.query(`SELECT id FROM ${schema}."${name}"`)).rows).toEqual([]);
      expect(await checkpoints.load(`p_${name}`)).toBeNull();
      // And the next unit, on another connection, stores both
      await checkpoints.atomically!(
        () => c.upsertIfNewer(entry('u/a', 1)).then(() => undefined),
        () => checkpoints.save(`p_${name}`, 1n),
      );
      expect(await c.get('u/a')).toEqual(entry('u/a', 1));
      expect(await checkpoints.load(`p_${name}`)).toBe(1n);
    });

    it('answers a server it cannot reach as unavailable (a 503), and ping false', async () => {
      await expect(PostgresReadModelStore.connect('postgres://postgres@127.0.0.1:1/none', schema)).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
      const unreachable = new PostgresReadModelStore('postgres://postgres@127.0.0.1:1/none', schema);
      await expect(unreachable.collection(name).get('x')).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(await unreachable.ping()).toBe(false);
      await unreachable.close();
    });
  });
}
