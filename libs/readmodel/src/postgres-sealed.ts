import { createHmac } from 'node:crypto';
import type { Pool } from 'pg';
import { BatchedReads, Coalesced, KeyCache, freshKey, scrubDeletedKeys, seal, sealedKeyId, unseal, type StreamKey } from '@udp/eventstore';
import { bindParams } from './filter';
import type {
  Collection,
  Document,
  FieldCondition,
  Filter,
  FindOptions,
  PreparedFilter,
  PreparedFind,
  PreparedFindOptions,
  Scalar,
  SealedField,
  Sealing,
  Sort,
  VersionedDocument,
} from './port';
import { fieldsOf, orderSql, whereSql } from './postgres-filter';
import { checkFieldName } from './sqlite-filter';

/**
 * Sealed collections of the PostgreSQL read models (`ReadModelStore.seal`): the erasure promise kept where deletion
 * alone cannot keep it (PostgreSQL keeps deleted rows in its pages and its WAL: docs/erasure.md, "PostgreSQL").
 *
 * - **Each owner has a key** (`_owner_keys`: owner, key id, 32 random bytes), made by the first write of one of their
 *   documents, destroyed by `forgetOwner` once their documents are deleted, then scrubbed from the files as the event
 *   store's stream keys are (`scrubDeletedKeys`).
 * - **A row** is `id`, `revision`, `doc`: only the fields queries name (`Sealing.fields`), the personal ones as keyed
 *   hashes; `key_id`; and `sealed`: the whole document, AES-256-GCM with the owner's key. Every read answers the
 *   sealed copy; `doc` serves the filters, sorts and indexes exactly as the plain collections' (postgres-filter.ts).
 * - **Hashes** (HMAC-SHA-256, 22 base64url characters): the owner field and `owner` fields with a key derived from the
 *   owner's, `store` fields with the store's key (`_store_key`, made once: for a query across owners); ids with the
 *   owner's (`ownerOfId`) or the store's. A filter's values are hashed the same way before it is translated, so
 *   equality, `$in` and the order of a hashed field (its hashes' order, the same in a sort and in a range) hold.
 * - **A key cached by this process may have been destroyed by another's erasure**: a write sealed with it is refused
 *   in its statement (`stale`) and done again with the owner's current key; a read by owner checks it in its statement
 *   and is read again with the current one. Owners' keys are cached (LRU), so a hot user's read needs no lookup.
 */

/** An owner's key: `key` seals their documents, `hash` keys the hashes of their fields and ids. */
interface OwnerKey extends StreamKey {
  hash: Buffer;
}

const withHash = (key: StreamKey): OwnerKey => ({ ...key, hash: createHmac('sha256', key.key).update('udp-readmodel-hash').digest() });

/** A field's value as stored in `doc`: null stays null (a missing field equals null). */
const keyedHash = (key: Buffer, value: Scalar): string | null =>
  value === null ? null : createHmac('sha256', key).update(JSON.stringify(value)).digest('base64url').slice(0, 22);

/** Never a hash (hashes are base64url): an owner without a key has nothing, and a filter on them matches nothing. */
const NOTHING = '\u0001';

/** Owners' keys cached in the process, the least recently used dropped beyond this. */
const KEY_CACHE_SIZE = 100_000;

/** What a sealed collection needs of its store. */
export interface SealedStore {
  readonly pool: Pool;
  /** `<schema>.<name>`, quoted. */
  qualified(name: string): string;
  query<R extends object>(text: string, values?: unknown[], name?: boolean): Promise<R[]>;
  write<R extends object>(text: string, values?: unknown[]): Promise<R[]>;
  /** The schema made (keys tables included). */
  schemaReady(): Promise<void>;
  /** Extended statistics on fields queries name (postgres.ts, `ensureStatistics`): else PostgreSQL misplans a page. */
  statistics(collection: string, fields: readonly string[]): Promise<void>;
  unavailable(error: unknown): unknown;
  /** `work` outside any unit of work (postgres.ts): reads batched across callers must not run on one unit's connection. */
  outsideUnits<T>(work: () => Promise<T>): Promise<T>;
  /** Whether the caller is in a unit whose transaction has begun (its reads go on its connection, not batched). */
  inUnitTransaction(): boolean;
  /** The store's reads by id of one kind, sent together when they pile up (postgres.ts). */
  getsOf(name: string, readAll: (ids: string[]) => Promise<Array<Document | null>>): BatchedReads<string, Document | null>;
}

/** The statements that make a schema's keys tables. */
export const sealingSchema = (keys: string, storeKey: string) => [
  `CREATE TABLE IF NOT EXISTS ${keys} (owner text COLLATE "C" PRIMARY KEY, key_id bigint NOT NULL UNIQUE, key bytea NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ${storeKey} (one boolean PRIMARY KEY DEFAULT true CHECK (one), key bytea NOT NULL)`,
];

/** The owners' keys of one schema, and its store key. */
export class OwnerKeys {
  private readonly byOwner = new KeyCache<string, OwnerKey>(KEY_CACHE_SIZE);
  private readonly byId = new KeyCache<bigint, OwnerKey>(KEY_CACHE_SIZE);
  private readonly ownerReads: BatchedReads<string, OwnerKey | null>;
  private readonly idReads: BatchedReads<bigint, OwnerKey | null>;
  private storeKeyMade: Promise<Buffer> | null = null;
  private readonly scrub: Coalesced;
  readonly table: string;

  constructor(private readonly store: SealedStore) {
    this.table = store.qualified('_owner_keys');
    // Batched across callers: on the pool, never on a unit's connection (its uncommitted keys are for it alone).
    this.ownerReads = new BatchedReads(async (owners) => {
      const rows = await store.outsideUnits(() =>
        store.query<{ owner: string; key_id: string; key: Buffer }>(
          `SELECT owner, key_id::text, key FROM ${this.table} WHERE owner = ANY($1::text[])`,
          [owners],
          true,
        ),
      );
      const found = new Map(rows.map((row) => [row.owner, this.remember(row.owner, BigInt(row.key_id), row.key)]));
      return owners.map((owner) => found.get(owner) ?? null);
    });
    this.idReads = new BatchedReads(async (ids) => {
      const rows = await store.outsideUnits(() =>
        store.query<{ owner: string; key_id: string; key: Buffer }>(
          `SELECT owner, key_id::text, key FROM ${this.table} WHERE key_id = ANY($1::bigint[])`,
          [ids.map(String)],
          true,
        ),
      );
      const found = new Map(rows.map((row) => [BigInt(row.key_id), this.remember(row.owner, BigInt(row.key_id), row.key)]));
      return ids.map((id) => found.get(id) ?? null);
    });
    this.scrub = new Coalesced(() => scrubDeletedKeys(store.pool, this.table, (error) => store.unavailable(error)));
  }

  private remember(owner: string, id: bigint, key: Buffer): OwnerKey {
    const known = this.byId.get(id);
    if (known) return known;
    const made = withHash({ id, key });
    this.byOwner.set(owner, made);
    this.byId.set(id, made);
    return made;
  }

  /** The owner's key, or null when they have none (nothing of theirs is stored). `fresh`: not from the cache. */
  async of(owner: string, fresh = false): Promise<OwnerKey | null> {
    if (!fresh) {
      const cached = this.byOwner.get(owner);
      if (cached) return cached;
    } else this.forgetCached(owner);
    await this.store.schemaReady();
    return this.ownerReads.read(owner);
  }

  /**
   * Each owner's key, made for those who have none: the owners not cached are looked up and the missing keys stored in
   * one statement (a projection's batch meets many users writing for the first time).
   */
  async madeAll(owners: readonly string[]): Promise<Map<string, OwnerKey>> {
    const keys = new Map<string, OwnerKey>();
    const uncached: string[] = [];
    for (const owner of new Set(owners)) {
      const cached = this.byOwner.get(owner);
      if (cached) keys.set(owner, cached);
      else uncached.push(owner);
    }
    if (uncached.length === 0) return keys;
    await this.store.schemaReady();
    const fresh = uncached.map(() => freshKey());
    // Stored when missing (two processes may make one at once: the first stored wins, and both use it); the stored
    // ones read in the same statement.
    const rows = await this.store.write<{ owner: string; key_id: string; key: Buffer }>(
      `WITH input AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::bytea[]) AS i(owner, key_id, key)),
       made AS (INSERT INTO ${this.table} (owner, key_id, key) SELECT owner, key_id, key FROM input ORDER BY owner COLLATE "C"
                ON CONFLICT (owner) DO NOTHING RETURNING owner, key_id, key)
       SELECT owner, key_id::text, key FROM made
       UNION ALL SELECT k.owner, k.key_id::text, k.key FROM ${this.table} k JOIN input USING (owner)
       WHERE NOT EXISTS (SELECT 1 FROM made WHERE made.owner = k.owner)`,
      [uncached, fresh.map((key) => key.id.toString()), fresh.map((key) => key.key)],
    );
    for (const row of rows) keys.set(row.owner, this.remember(row.owner, BigInt(row.key_id), row.key));
    // A key stored by another process after this statement's snapshot was taken: read again.
    for (const owner of uncached.filter((o) => !keys.has(o))) {
      const stored = await this.of(owner, true);
      if (!stored) throw new Error('an owner key made by another process was deleted at once');
      keys.set(owner, stored);
    }
    return keys;
  }

  /** A key by its id (a row's), or null when it was destroyed. */
  async byKeyId(id: bigint): Promise<OwnerKey | null> {
    return this.byId.get(id) ?? this.idReads.read(id);
  }

  /** Drops a key this process cached (destroyed elsewhere, or about to be). */
  forgetCached(owner: string, id?: bigint): void {
    const cached = this.byOwner.get(owner);
    this.byOwner.delete(owner);
    if (cached) this.byId.delete(cached.id);
    if (id !== undefined) this.byId.delete(id);
  }

  /** The store's key: made once per schema. */
  storeKey(): Promise<Buffer> {
    const made = (this.storeKeyMade ??= (async () => {
      await this.store.schemaReady();
      const table = this.store.qualified('_store_key');
      await this.store.write(`INSERT INTO ${table} (key) VALUES ($1) ON CONFLICT DO NOTHING`, [freshKey().key]);
      const [row] = await this.store.query<{ key: Buffer }>(`SELECT key FROM ${table}`);
      return createHmac('sha256', row.key).update('udp-readmodel-store-hash').digest();
    })());
    made.catch(() => (this.storeKeyMade = null));
    return made;
  }

  /** Destroys the owner's key, then scrubs it from the files (shared by the erasures that come together). */
  async destroy(owner: string): Promise<void> {
    this.forgetCached(owner);
    await this.store.schemaReady();
    await this.store.write(`DELETE FROM ${this.table} WHERE owner = $1`, [owner]);
    this.forgetCached(owner);
    // Even when there was none: an erasure retried after its scrub failed must not confirm without one.
    await this.scrub.request();
  }
}

/** The hashes a filter's values need: the owner's key (null: they have none), the store's. */
interface Hashing {
  owner: OwnerKey | null | undefined;
  store: Buffer;
  /** Each owner's key of the ids named (ids hashed with the owners' keys). */
  ids: Map<string, OwnerKey | null>;
}

/** Where the row's document is read from, the key's id, and the stale check's marker. */
const ROW_COLUMNS = 'key_id::text AS key_id, sealed';

export class SealedCollection<T extends Document> implements Collection<T> {
  private readonly fields: Readonly<Record<string, SealedField>>;

  constructor(
    private readonly store: SealedStore,
    private readonly keys: OwnerKeys,
    private readonly name: string,
    private readonly table: string,
    private readonly sealing: Sealing,
    private readonly tableReady: () => Promise<void>,
  ) {
    this.fields = sealing.fields;
    for (const field of Object.keys(this.fields)) checkFieldName(field);
    if (sealing.ownerField !== undefined && this.fields[sealing.ownerField] !== 'owner')
      throw new Error(`sealed collection ${name}: its owner field ${sealing.ownerField} must be kept 'owner'`);
    if (sealing.ownerField === undefined && !sealing.ownerOfId)
      throw new Error(`sealed collection ${name}: names neither an owner field nor the owner of an id`);
  }

  private ownerOf(doc: Document): string {
    const owner =
      this.sealing.ownerField !== undefined
        ? (doc as unknown as Record<string, unknown>)[this.sealing.ownerField]
        : this.sealing.ownerOfId!(doc._id);
    if (typeof owner !== 'string' || owner === '') throw new Error(`sealed collection ${this.name}: a document without its owner`);
    return owner;
  }

  // ---- hashing -------------------------------------------------------------------------------------------------

  private idHash(id: string, hashing: Hashing): string {
    if (!this.sealing.ownerOfId) return keyedHash(hashing.store, id)!;
    const key = hashing.ids.get(this.sealing.ownerOfId(id));
    return key ? keyedHash(key.hash, id)! : NOTHING;
  }

  private valueHash(field: string, value: Scalar, hashing: Hashing): Scalar {
    const kind = this.fields[field];
    if (kind === undefined) throw new Error(`sealed collection ${this.name}: ${field} is not a field its queries may name`);
    if (kind === 'plain') return value;
    if (kind === 'store') return keyedHash(hashing.store, value);
    if (kind === 'presence') {
      if (value !== null) throw new Error(`sealed collection ${this.name}: ${field} is compared with null only`);
      return null;
    }
    if (hashing.owner === undefined) throw new Error(`sealed collection ${this.name}: a filter on ${field} must name the owner`);
    return hashing.owner ? keyedHash(hashing.owner.hash, value) : NOTHING;
  }

  /** The row's `doc`: the queried fields, hashed as declared. */
  private queried(doc: Record<string, unknown>, key: OwnerKey, store: Buffer): Record<string, unknown> {
    const kept: Record<string, unknown> = {};
    for (const [field, kind] of Object.entries(this.fields)) {
      const value = doc[field];
      if (value === undefined) continue;
      if (kind === 'plain') kept[field] = value;
      else if (kind === 'presence') kept[field] = value === null ? null : true;
      else kept[field] = keyedHash(kind === 'store' ? store : key.hash, value as Scalar);
    }
    return kept;
  }

  /** The owner a filter names (its owner field's equality), undefined when it names none. */
  private ownerNamed(filter: Filter): string | undefined {
    const field = this.sealing.ownerField;
    if (field === undefined) return undefined;
    const condition = filter[field] as FieldCondition | undefined;
    if (typeof condition === 'string') return condition;
    if (condition !== null && typeof condition === 'object' && typeof condition.$eq === 'string') return condition.$eq;
    return undefined;
  }

  /** The ids a filter names (in `_id` conditions, its branches too). */
  private idsNamed(filter: Filter, into: Set<string> = new Set()): Set<string> {
    for (const [key, condition] of Object.entries(filter)) {
      if (condition === undefined) continue;
      if (key === '$or' || key === '$and') for (const branch of condition as Filter[]) this.idsNamed(branch, into);
      else if (key === '_id') {
        const operands = condition !== null && typeof condition === 'object' ? Object.values(condition).flat() : [condition];
        for (const operand of operands) if (typeof operand === 'string') into.add(operand);
      }
    }
    return into;
  }

  /** The keys `filter`'s values are hashed with; `fresh`: the owner's not from the cache. */
  private async hashing(filter: Filter, fresh = false): Promise<Hashing> {
    const owner = this.ownerNamed(filter);
    const ids = new Map<string, OwnerKey | null>();
    const idOwners = this.sealing.ownerOfId
      ? new Set([...this.idsNamed(filter)].map((id) => this.sealing.ownerOfId!(id)))
      : new Set<string>();
    const [store, ownerKey] = await Promise.all([this.keys.storeKey(), owner === undefined ? undefined : this.keys.of(owner, fresh)]);
    await Promise.all(
      [...idOwners].map(async (o) => ids.set(o, o === owner && ownerKey !== undefined ? ownerKey : await this.keys.of(o, fresh))),
    );
    return { owner: ownerKey, store, ids };
  }

  /** `filter` with its values hashed as the row's `doc` keeps them. */
  private hashed(filter: Filter, hashing: Hashing): Filter {
    const out: Filter = {};
    for (const [key, condition] of Object.entries(filter)) {
      if (condition === undefined) continue;
      if (key === '$or' || key === '$and') {
        out[key] = (condition as Filter[]).map((branch) => this.hashed(branch, hashing));
        continue;
      }
      const one = (value: Scalar): Scalar =>
        key === '_id' ? (typeof value === 'string' ? this.idHash(value, hashing) : value) : this.valueHash(key, value, hashing);
      if (condition === null || typeof condition !== 'object') out[key] = one(condition as Scalar);
      else
        out[key] = Object.fromEntries(
          Object.entries(condition).map(([op, operand]) => [op, Array.isArray(operand) ? operand.map(one) : one(operand as Scalar)]),
        ) as FieldCondition;
    }
    return out;
  }

  /** The key ids a read by owner relied on (the owner's, the ids' owners'): checked in the read's statement. */
  private usedKeys(hashing: Hashing): string[] {
    const used = new Set<string>();
    if (hashing.owner) used.add(hashing.owner.id.toString());
    for (const key of hashing.ids.values()) if (key) used.add(key.id.toString());
    return [...used];
  }

  // ---- reads ---------------------------------------------------------------------------------------------------

  /** The documents of rows, each opened with its key (a row whose key was destroyed is of an erased owner: left out). */
  private async opened(rows: Array<{ key_id: string | null; sealed: string | null }>): Promise<T[]> {
    const live = rows.filter((row) => row.sealed !== null);
    // The keys asked for at once: a read across users meets many, looked up together (BatchedReads), not one by one.
    const ids = [...new Set(live.map((row) => row.key_id!))];
    const keys = new Map(await Promise.all(ids.map(async (id) => [id, await this.keys.byKeyId(BigInt(id))] as const)));
    const docs: T[] = [];
    for (const row of live) {
      const key = keys.get(row.key_id!);
      if (!key || sealedKeyId(row.sealed!) !== key.id) continue;
      docs.push(JSON.parse(unseal(row.sealed!, key)) as T);
    }
    return docs;
  }

  /**
   * The rows of `where` (and order, limit), with a marker row (both columns null) when a key the filter was hashed with
   * is no longer stored: it was destroyed by another process, and the read is done again with the current keys.
   */
  private async rows(filter: Filter, tail: (where: { sql: string; params: unknown[] }) => string, sort?: Sort): Promise<T[]> {
    await this.tableReady();
    await this.statistics(filter, sort);
    for (let attempt = 0; ; attempt++) {
      const hashing = await this.hashing(filter, attempt > 0);
      if (hashing.owner === null && this.ownerNamed(filter) !== undefined) return []; // an owner with no key has nothing
      const where = whereSql(this.hashed(filter, hashing));
      const used = this.usedKeys(hashing);
      const select = `SELECT ${ROW_COLUMNS} FROM ${this.table} WHERE ${where.sql}${tail(where)}`;
      const text = used.length
        ? `(${select}) UNION ALL (SELECT NULL, NULL WHERE (SELECT count(*) FROM ${this.keys.table} WHERE key_id = ANY($${where.params.length + 1}::bigint[])) < ${used.length})`
        : select;
      const rows = await this.store.query<{ key_id: string | null; sealed: string | null }>(
        text,
        used.length ? [...where.params, used] : where.params,
        true,
      );
      if (rows.some((row) => row.sealed === null) && attempt < 3) continue;
      return this.opened(rows);
    }
  }

  /** By id, as a plain collection's: gets that pile up go together in one statement (every write reads its head). */
  async get(id: string): Promise<T | null> {
    if (this.store.inUnitTransaction()) return (await this.getMany([id]))[0] ?? null;
    const gets = this.store.getsOf(`sealed\0${this.name}`, (ids) => this.store.outsideUnits(() => this.getEach(ids)));
    return (await gets.read(id)) as T | null;
  }

  /** Each id's document or null, in the ids' order. */
  private async getEach(ids: string[]): Promise<Array<T | null>> {
    const byId = new Map((await this.getMany(ids)).map((doc) => [doc._id, doc]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  async getMany(ids: readonly string[]): Promise<T[]> {
    if (ids.length === 0) return [];
    return this.rows({ _id: { $in: [...new Set(ids)] } }, () => '');
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    const limit = options.limit === undefined ? '' : ` LIMIT ${Math.max(0, Math.floor(options.limit))}`;
    return this.rows(filter, () => `${this.order(options.sort)}${limit}`, options.sort);
  }

  /** The fields a filter or a sort names get statistics, as a plain collection's: a failure to make them fails no query. */
  private async statistics(filter: Filter, sort?: Sort): Promise<void> {
    const fields = [...new Set([...fieldsOf(filter), ...Object.keys(sort ?? {})])].filter((field) => field !== '_id');
    await this.store.statistics(this.name, fields).catch(() => undefined);
  }

  private order(sort: Sort | undefined): string {
    for (const field of Object.keys(sort ?? {}))
      if (field !== '_id' && this.fields[field] === undefined)
        throw new Error(`sealed collection ${this.name}: ${field} is not a field its queries may sort by`);
    return orderSql(sort);
  }

  /** Translated per run (its values hashed), each shape a named statement of its own, so prepared once per connection. */
  prepareFind<K extends keyof T & string>(
    filter: PreparedFilter,
    { sort, select }: PreparedFindOptions<K>,
  ): PreparedFind<{ [F in K]: T[F] | null }> {
    return async (values, limit) => {
      const docs = await this.find(bindParams(filter, values), { sort, limit });
      return docs.map((doc) => {
        const row: Record<string, unknown> = {};
        for (const field of select) row[field] = (doc as unknown as Record<string, unknown>)[field] ?? null;
        return row as { [F in K]: T[F] | null };
      });
    };
  }

  async count(filter: Filter): Promise<number> {
    await this.tableReady();
    await this.statistics(filter);
    const hashing = await this.hashing(filter, true);
    const where = whereSql(this.hashed(filter, hashing));
    const [row] = await this.store.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.table} WHERE ${where.sql}`, where.params);
    return row.n;
  }

  // ---- writes --------------------------------------------------------------------------------------------------

  async upsertIfNewer(doc: T & VersionedDocument): Promise<boolean> {
    return (await this.upsertManyIfNewer([doc]))[0];
  }

  /**
   * One statement: the rows whose key is still stored are written (revision-guarded, in id order), and the ids of the
   * keys no longer stored are answered; their owners' documents are sealed again with a new key and written again.
   */
  async upsertManyIfNewer(docs: ReadonlyArray<T & VersionedDocument>): Promise<boolean[]> {
    if (docs.length === 0) return [];
    await this.tableReady();
    const written = new Map<T & VersionedDocument, boolean>();
    let pending = [...docs];
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 3) throw new Error(`sealed collection ${this.name}: owners' keys destroyed while writing, again and again`);
      const store = await this.keys.storeKey();
      const keyOf = await this.keys.madeAll(pending.map((doc) => this.ownerOf(doc)));
      const rows = pending.map((doc) => this.sealedRow(doc, keyOf.get(this.ownerOf(doc))!, store));
      const result = await this.store.write<{ id: string | null; stale: string | null }>(
        `WITH input AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(id text, revision double precision, doc jsonb, key_id text, sealed text)),
         live AS (SELECT input.* FROM input JOIN ${this.keys.table} k ON k.key_id = input.key_id::bigint),
         written AS (
           INSERT INTO ${this.table} AS stored (id, revision, doc, key_id, sealed)
           SELECT id, revision, doc, key_id::bigint, sealed FROM live ORDER BY id COLLATE "C"
           ON CONFLICT (id) DO UPDATE SET revision = excluded.revision, doc = excluded.doc, key_id = excluded.key_id, sealed = excluded.sealed
           WHERE stored.revision < excluded.revision
           RETURNING id)
         SELECT id, NULL AS stale FROM written
         UNION ALL SELECT DISTINCT NULL, key_id FROM input WHERE NOT EXISTS (SELECT 1 FROM live WHERE live.key_id = input.key_id)`,
        [JSON.stringify(rows)],
      );
      const stale = new Set(result.filter((row) => row.stale !== null).map((row) => row.stale!));
      const done = new Set(result.filter((row) => row.id !== null).map((row) => row.id!));
      const again: Array<T & VersionedDocument> = [];
      pending.forEach((doc, i) => {
        if (stale.has(rows[i].key_id)) again.push(doc);
        else written.set(doc, done.has(rows[i].id));
      });
      for (const doc of again) this.keys.forgetCached(this.ownerOf(doc), BigInt(keyOf.get(this.ownerOf(doc))!.id));
      pending = again;
    }
    return docs.map((doc) => written.get(doc) ?? false);
  }

  /** A document as its row stores it: its id hashed, its queried fields, its key's id and the document sealed. */
  private sealedRow(doc: T & VersionedDocument, key: OwnerKey, store: Buffer) {
    return {
      id: keyedHash(this.sealing.ownerOfId ? key.hash : store, doc._id)!,
      revision: doc.revision,
      doc: this.queried(doc as unknown as Record<string, unknown>, key, store),
      key_id: key.id.toString(),
      sealed: seal(JSON.stringify(doc), key),
    };
  }

  /** Each matching document read, changed and sealed again (the sealed copy cannot be changed in place). */
  async updateMany(filter: Filter, set: Partial<T>): Promise<number> {
    const changes = { ...set } as Record<string, unknown>;
    delete changes._id;
    const matching = await this.find(filter);
    if (matching.length === 0) return 0;
    const store = await this.keys.storeKey();
    const keyOf = await this.keys.madeAll(matching.map((doc) => this.ownerOf(doc)));
    const rows = matching.map((doc) =>
      this.sealedRow({ ...doc, ...changes } as unknown as T & VersionedDocument, keyOf.get(this.ownerOf(doc))!, store),
    );
    await this.store.write(
      `UPDATE ${this.table} AS stored SET revision = r.revision, doc = r.doc, key_id = r.key_id::bigint, sealed = r.sealed
       FROM jsonb_to_recordset($1::jsonb) AS r(id text, revision double precision, doc jsonb, key_id text, sealed text) WHERE stored.id = r.id`,
      [JSON.stringify(rows)],
    );
    return matching.length;
  }

  async deleteMany(filter: Filter): Promise<number> {
    await this.tableReady();
    // Not from the cache: a key destroyed by another process's erasure would hash to rows that are not there.
    const hashing = await this.hashing(filter, true);
    if (hashing.owner === null && this.ownerNamed(filter) !== undefined) return 0;
    const where = whereSql(this.hashed(filter, hashing));
    const rows = await this.store.write<{ n: number }>(
      `WITH gone AS (DELETE FROM ${this.table} WHERE ${where.sql} RETURNING 1) SELECT count(*)::int AS n FROM gone`,
      where.params,
    );
    return rows[0].n;
  }
}
