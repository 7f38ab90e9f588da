import { randomUUID } from 'node:crypto';
import { filesHolding, postgresDataDirs, replicaCaughtUpAndCheckpointed, reportSkipped } from '@udp/test-kit';
import { param, type Sealing } from './port';
import { PostgresReadModelStore } from './postgres';

/**
 * Sealed collections on PostgreSQL (postgres-sealed.ts): what they answer is what a plain collection answers, what
 * they store names no owner's data in plain, and once an owner's key is destroyed no file of the primary or the
 * replica holds it. POSTGRES_URL, POSTGRES_REPLICA_URL and POSTGRES_DATA_DIRS: tools/servers/with-servers.sh.
 */
const url = process.env.POSTGRES_URL;
const schema = `udp_sealed_${randomUUID().replace(/-/g, '').slice(0, 12)}`;

interface Entry {
  _id: string;
  userId: string;
  item_id: string;
  date: number;
  deleted: boolean;
  note: string;
  answer?: string | null;
  revision: number;
}

const SEALING: Sealing = {
  ownerField: 'userId',
  ownerOfId: (id) => id.slice(0, id.indexOf('/')),
  fields: { userId: 'owner', item_id: 'store', date: 'plain', deleted: 'plain', revision: 'plain', answer: 'presence' },
};
const unique = (prefix: string) => `${prefix}${randomUUID().replace(/-/g, '')}`;
const entry = (userId: string, item: string, date: number, extra: Partial<Entry> = {}): Entry => ({
  _id: `${userId}/${item}`,
  userId,
  item_id: item,
  date,
  deleted: false,
  note: `note of ${userId} ${item}`,
  answer: `{"item":"${item}"}`,
  revision: 1,
  ...extra,
});

if (!url) {
  reportSkipped('sealed read models: postgresql', 'POSTGRES_URL is unset (tools/servers/with-servers.sh sets it)');
} else {
  const { Client } = require('pg') as typeof import('pg');
  let client: import('pg').Client;
  const stores: PostgresReadModelStore[] = [];
  const open = async () => {
    const store = await PostgresReadModelStore.connect(url, schema);
    stores.push(store);
    return store;
  };
  beforeAll(async () => {
    client = new Client({ connectionString: url });
    await client.connect();
  });
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
  });
  afterAll(async () => {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  });

  describe('PostgresReadModelStore: sealed collections', () => {
    it('answers queries as a plain collection does, and stores no field of the documents in plain but those declared so', async () => {
      // Given a sealed collection and the same documents in a plain one
      const store = await open();
      const name = unique('sealed_');
      store.seal(name, SEALING);
      const sealed = store.collection<Entry>(name);
      const plain = store.collection<Entry>(unique('plain_'));
      const [alice, bob] = [unique('alice'), unique('bob')];
      const docs = [
        entry(alice, 'item-a', 300),
        entry(alice, 'item-b', 200),
        entry(alice, 'item-c', 200),
        entry(alice, 'item-d', 100, { deleted: true, answer: null }),
        entry(bob, 'item-a', 250),
      ];
      for (const collection of [sealed, plain]) {
        expect(await collection.upsertManyIfNewer(docs)).toEqual([true, true, true, true, true]);
        expect(await collection.upsertIfNewer({ ...docs[0], revision: 1 })).toBe(false);
      }

      // Then what they answer is the same, but where the order of a hashed field decides (its hashes' order)
      const ids = (found: Entry[]) => found.map((doc) => doc._id).sort();
      for (const filter of [
        { userId: alice },
        { userId: alice, deleted: false },
        { userId: alice, date: { $gte: 200 } },
        { item_id: 'item-a' },
        { item_id: { $in: ['item-a', 'item-c'] } },
        { userId: alice, item_id: 'item-b' },
        { userId: alice, answer: null },
        { _id: { $in: [`${alice}/item-a`, `${bob}/item-a`, `${bob}/none`] } },
        { userId: unique('nobody') },
      ])
        expect([ids(await sealed.find(filter)), await sealed.count(filter)]).toEqual([
          ids(await plain.find(filter)),
          await plain.count(filter),
        ]);
      expect(await sealed.get(`${alice}/item-a`)).toEqual(docs[0]);
      expect(await sealed.get(`${unique('nobody')}/item-a`)).toBeNull();
      expect((await sealed.find({ userId: alice }, { sort: { date: -1 }, limit: 1 }))[0]).toEqual(docs[0]);
      // A sort by a hashed field and a range on it agree: the page after a document is the rest of the order.
      const byItem = await sealed.find({ userId: alice, date: 200 }, { sort: { item_id: 1 } });
      expect(byItem).toHaveLength(2);
      expect(await sealed.find({ userId: alice, date: 200, item_id: { $gt: byItem[0].item_id } }, { sort: { item_id: 1 } })).toEqual([
        byItem[1],
      ]);
      const page = sealed.prepareFind(
        { userId: param('user', 'string'), deleted: false },
        { sort: { date: -1 }, select: ['answer', 'date'] },
      );
      expect(await page({ user: alice }, 1)).toEqual([{ answer: '{"item":"item-a"}', date: 300 }]);

      // And what the table holds names no user, item or note in plain
      const { rows } = await client.query(`SELECT id, doc::text AS doc, sealed FROM "${schema}"."${name}"`);
      expect(rows).toHaveLength(5);
      for (const row of rows) expect(`${row.id} ${row.doc} ${row.sealed}`).not.toMatch(/alice|bob|item-|note of/);

      // A field no query may name is refused, not answered wrongly
      await expect(sealed.find({ note: 'x' } as never)).rejects.toThrow(/not a field its queries may name/);
    });

    it('changes and deletes through the hashes: updateMany seals the changed document again, deleteMany by owner', async () => {
      const store = await open();
      const name = unique('sealed_');
      store.seal(name, SEALING);
      const sealed = store.collection<Entry>(name);
      const [alice, bob] = [unique('alice'), unique('bob')];
      await sealed.upsertManyIfNewer([entry(alice, 'x', 1, { answer: null }), entry(alice, 'y', 2), entry(bob, 'x', 3, { answer: null })]);
      expect(await sealed.updateMany({ answer: null }, { answer: 'filled' })).toBe(2);
      expect((await sealed.get(`${alice}/x`))?.answer).toBe('filled');
      expect(await sealed.count({ answer: null })).toBe(0);
      expect(await sealed.deleteMany({ userId: alice })).toBe(2);
      expect(await sealed.find({ item_id: 'x' })).toEqual([{ ...entry(bob, 'x', 3), answer: 'filled' }]);
    });

    it('a key destroyed by another process: its cached copy neither loses a write nor hides a read', async () => {
      // Given two processes, the first with alice's key cached
      const [first, second] = [await open(), await open()];
      const name = unique('sealed_');
      for (const store of [first, second]) store.seal(name, SEALING);
      const [one, two] = [first.collection<Entry>(name), second.collection<Entry>(name)];
      const alice = unique('alice');
      await one.upsertIfNewer(entry(alice, 'old', 1));
      expect(await one.find({ userId: alice })).toHaveLength(1);
      // When the second erases her (documents, then key) and she writes again through the second
      expect(await two.deleteMany({ userId: alice })).toBe(1);
      await second.forgetOwner(alice);
      await two.upsertIfNewer(entry(alice, 'new', 2));
      // Then the first reads her new document (not nothing, with its stale key), and writes with her new key
      expect((await one.find({ userId: alice })).map((doc) => doc.item_id)).toEqual(['new']);
      expect(await one.upsertIfNewer(entry(alice, 'newer', 3))).toBe(true);
      expect((await two.find({ userId: alice })).map((doc) => doc.item_id).sort()).toEqual(['new', 'newer']);
      // And a write sealed with a key that is gone is sealed again, not lost
      await second.forgetOwner(alice);
      expect(await one.upsertIfNewer(entry(alice, 'after', 4))).toBe(true);
      expect((await two.find({ userId: alice })).map((doc) => doc.item_id)).toContain('after');
    });

    it('after forgetOwner no file of the primary or the replica holds the owner key, while another owner key stays', async () => {
      const replicaUrl = process.env.POSTGRES_REPLICA_URL;
      const dirs = postgresDataDirs();
      if (!replicaUrl || dirs.length !== 2) throw new Error('POSTGRES_REPLICA_URL and POSTGRES_DATA_DIRS are needed (with-servers.sh)');
      const replica = new Client({ connectionString: replicaUrl });
      await replica.connect();
      try {
        const standby = (await replica.query('SELECT pg_is_in_recovery() AS standby')).rows[0].standby === true;
        if (!standby)
          process.stdout.write(
            "[sealed read models] the replica was promoted by an earlier suite: the primary's data dir alone is scanned\n",
          );
        const scanned = standby ? dirs : dirs.slice(0, 1);
        const store = await open();
        const name = unique('sealed_');
        store.seal(name, SEALING);
        const sealed = store.collection<Entry>(name);
        const [gone, kept] = [unique('gone'), unique('kept')];
        await sealed.upsertManyIfNewer([entry(gone, 'i1', 1), entry(kept, 'i1', 1)]);
        const keyOf = async (owner: string) =>
          (await client.query(`SELECT key FROM "${schema}"."_owner_keys" WHERE owner = $1`, [owner])).rows[0].key as Buffer;
        const [goneKey, keptKey] = [await keyOf(gone), await keyOf(kept)];
        await client.query('CHECKPOINT');
        if (standby) await replicaCaughtUpAndCheckpointed(client, replica);
        // The scan finds a key where PostgreSQL keeps it (so a clean scan below means something).
        const before = filesHolding(scanned, [goneKey]);
        for (const dir of scanned) expect(before.get('0')?.some((f) => f.startsWith(dir))).toBe(true);

        await sealed.deleteMany({ userId: gone });
        await store.forgetOwner(gone);
        if (standby) await replicaCaughtUpAndCheckpointed(client, replica);
        const after = filesHolding(scanned, [goneKey, keptKey]);
        expect(after.get('0') ?? []).toEqual([]);
        for (const dir of scanned) expect(after.get('1')?.some((f) => f.startsWith(dir))).toBe(true);
        expect(await sealed.find({ item_id: 'i1' })).toEqual([entry(kept, 'i1', 1)]);
      } finally {
        await replica.end();
      }
    });

    it('refuses to seal a collection after its first use, and to hold sealed rows in a table made plain', async () => {
      const store = await open();
      const name = unique('late_');
      await store.collection<Entry>(name).upsertIfNewer(entry('u', 'i', 1));
      expect(() => store.seal(name, SEALING)).toThrow(/after its first use/);
      const other = await open();
      other.seal(name, SEALING);
      await expect(other.collection<Entry>(name).find({ userId: 'u' })).rejects.toThrow(/holds plain documents/);
    });
  });
}
