import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { Pool, PoolClient, QueryConfig, QueryResult } from 'pg';
import { BatchedReads, LastWriteFailure, SchemaOnce, inTransaction, postgresPool, sqlStateOf, unavailableAs } from '@udp/eventstore';
import { bindValues, fieldsOf, keySql, orderSql, whereSql } from './postgres-filter';
import { OwnerKeys, SealedCollection, type SealedStore, sealingSchema } from './postgres-sealed';
import { checkFieldName } from './sqlite-filter';
import type {
  CheckpointStore,
  Collection,
  Document,
  Filter,
  FindOptions,
  PreparedFilter,
  PreparedFind,
  PreparedFindOptions,
  ReadModelStore,
  Sealing,
  Sort,
  VersionedDocument,
} from './port';

/**
 * Read models on PostgreSQL (node-postgres), for the distributed mode beside the PostgreSQL event store.
 *
 * - **Layout.** A schema per service (as MongoDB has a database per service), in it a table per collection: `id text
 *   COLLATE "C" PRIMARY KEY, revision double precision, doc jsonb` (the whole document, its id and revision
 *   included), made when the collection is first used. Checkpoints in `_checkpoints` (`name`, `position numeric`: the
 *   PostgreSQL event store's positions take 128 bits).
 * - **Queries.** The port's filter subset as SQL over the jsonb document (postgres-filter.ts: MongoDB's semantics as
 *   filter.ts has them, types compared strictly); `prepareFind`'s statement is translated once and run as a named
 *   (server-side prepared) statement on each connection.
 * - **Writes.** `upsertIfNewer` and `upsertManyIfNewer` are one `INSERT ... ON CONFLICT (id) DO UPDATE ... WHERE
 *   stored.revision < excluded.revision` each: a batch's documents are one jsonb array parameter, one statement,
 *   written in id order (so two batches of the same documents take their row locks in one order: no deadlock).
 *   Concurrent writers of one document are settled by the row lock, so of the writes of one revision one only wins.
 * - **Indexes.** `ensureIndex` makes an expression index on each field's three keys (postgres-filter.ts), so an
 *   equality on the first field and the order of the next are read from the index. The fields queries name also get
 *   extended statistics on their three expressions (`ensureStatistics`), else PostgreSQL misjudges a condition on a
 *   field no index covers and sorts a user's whole set rather than read a page of it in the index's order. A prepared
 *   find has a statement per limit asked, the limit written in it, for the same reason.
 * - **Erasure.** `deleteMany` deletes the rows; PostgreSQL keeps the old row versions until VACUUM and in its
 *   write-ahead log, so users' documents are kept in sealed collections (`seal`, postgres-sealed.ts): each owner's
 *   sealed with a key of theirs, which `forgetOwner` destroys and scrubs once their documents are deleted.
 * - **Checkpoints** in `_checkpoints`, committed with the documents of their batch: the projector runs a batch and
 *   its checkpoint (or its segments' claims, in `projection_segments`) as one unit (`CheckpointStore.atomically`),
 *   one transaction on one connection of the pool. The transaction is begun by the unit's first write, so reads made
 *   before it go on the pool as any other read (batched `get`s included: nothing of the unit is uncommitted yet), and
 *   a unit that writes nothing (a publisher's batch goes to the bus) saves its checkpoint alone, with no transaction.
 *   From its first write on, every statement of the unit, reads included, goes on its connection, so it reads its
 *   own writes; a `get` there is not batched with other callers' (their reads must not see the unit's uncommitted
 *   rows). It costs two round trips per batch that writes, BEGIN and COMMIT, and holds the rows it wrote locked until
 *   it commits (a few milliseconds: the event feed waits below an open transaction that has written). A segment's
 *   claim lost meanwhile (its save matches no row) does not undo the batch: its writes are revision- or
 *   position-guarded, so the new holder applying the same events again changes nothing.
 */
export interface PostgresReadModelOptions {
  /** Connections of the pool. Default 8. */
  maxConnections?: number;
  /** `application_name` of the connections. */
  applicationName?: string;
}

/** How long a failed write keeps the store DOWN when neither a write nor `ping`'s probe succeeds meanwhile. */
const WRITE_FAILURE_MEMORY_MS = 30_000;
/** The advisory lock class under which tables and indexes are made (one process at a time per name). */
const LOCK_CLASS = 0x75647072; // 'udpr'

/**
 * SQLSTATE classes of a statement's own fault (bad data, constraint, syntax) or of its transaction's (a deadlock
 * between two units, settled by the server ending one): not the store's health.
 */
const STATEMENT_FAULTS = /^(22|23|40|42)/;

/** The server could not be reached or cannot serve now: a 503 for the request, not a 500. */
const unavailable = (error: unknown) => unavailableAs('read models', error);

/** A name as a quoted SQL identifier: at most 63 bytes (PostgreSQL would cut a longer one silently). */
function identifier(name: string): string {
  if (name.length === 0 || Buffer.byteLength(name) > 63 || name.includes('\0'))
    throw new Error(`unsupported read-model name ${JSON.stringify(name)} (1 to 63 bytes)`);
  return `"${name.replace(/"/g, '""')}"`;
}

const hashed = (text: string, length: number) => createHash('sha1').update(text).digest('hex').slice(0, length);

/** Named statements by text (the same few per collection, asked on every call): not hashed again each time. */
const statements = new Map<string, QueryConfig>();

/**
 * A query of its own for one call: node-postgres writes the values into the configuration it is given, and a shared
 * named statement's would keep the last call's (a batch's documents) for as long as the process runs.
 */
const statement = (query: QueryConfig | string, values: unknown[] = []): QueryConfig =>
  typeof query === 'string' ? { text: query, values } : { ...query, values };

/** A named statement for this text: node-postgres prepares it once per connection. */
function named(text: string): QueryConfig {
  let statement = statements.get(text);
  if (!statement) statements.set(text, (statement = { name: `udp_rm_${hashed(text, 24)}`, text }));
  return statement;
}

const CHECKPOINTS = '_checkpoints';

/** A unit's connection ended by the server: told by the unit's next statement, which fails. */
const connectionLost = () => undefined;

/**
 * A unit of work (`atomically`): its transaction, on a connection of its own, begun by its first write. `open` until
 * it ends: a statement its work left running after that goes on the pool.
 */
class Unit {
  open = true;
  /** The connection in its transaction, once a write began it. */
  begun: Promise<PoolClient> | null = null;
  /** The last statement sent on it: the next waits for its answer (a connection runs one at a time). */
  private last: Promise<unknown> = Promise.resolve();

  /** A statement on the unit's connection, after those sent before it (its work may send several at once). */
  query<R extends object>(client: PoolClient, query: QueryConfig | string): Promise<QueryResult<R>> {
    const result = this.last.then(() => client.query<R>(query));
    this.last = result.catch(() => undefined);
    return result;
  }
}

export class PostgresReadModelStore implements ReadModelStore {
  private readonly pool: Pool;
  private readonly schema: string;
  private readonly made: SchemaOnce;
  private readonly tables = new Map<string, Promise<void>>();
  private readonly writeFailures = new LastWriteFailure(WRITE_FAILURE_MEMORY_MS);
  /** `<collection>\0<field>` of the fields whose statistics this store object made (`ensureStatistics`). */
  private readonly statistics = new Set<string>();
  /** The sealed collections (`seal`), and the collections handed out (a collection is sealed before its first use). */
  private readonly sealings = new Map<string, Sealing>();
  private readonly handedOut = new Set<string>();
  private ownerKeysMade: OwnerKeys | null = null;
  private readonly sealedStore: SealedStore;

  /** `schema`: the service's own (created when missing), as MongoDB's database per service. */
  constructor(
    url: string,
    private readonly schemaName: string,
    options: PostgresReadModelOptions = {},
  ) {
    this.schema = identifier(schemaName);
    this.pool = postgresPool(url, { maxConnections: options.maxConnections, applicationName: options.applicationName ?? 'udp-readmodels' });
    this.made = new SchemaOnce('read models', () => this.createSchema());
    this.sealedStore = this.sealedStoreOf(this.pool);
  }

  /** Opens the store and makes its schema, so that a server that cannot be reached fails the start. */
  static async connect(url: string, schema: string, options: PostgresReadModelOptions = {}): Promise<PostgresReadModelStore> {
    const store = new PostgresReadModelStore(url, schema, options);
    try {
      await store.made.ready();
    } catch (error) {
      await store.pool.end().catch(() => undefined);
      throw error;
    }
    return store;
  }

  private async createSchema(): Promise<void> {
    await this.locked(`schema ${this.schemaName}`, [
      `CREATE SCHEMA IF NOT EXISTS ${this.schema}`,
      `CREATE TABLE IF NOT EXISTS ${this.schema}.${identifier(CHECKPOINTS)} (name text PRIMARY KEY, position numeric NOT NULL)`,
      ...sealingSchema(`${this.schema}.${identifier('_owner_keys')}`, `${this.schema}.${identifier('_store_key')}`),
    ]);
  }

  /** Statements run in one transaction under an advisory lock for `what`: processes that start together wait in turn. */
  private async locked(what: string, statements: string[]): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, what]);
      for (const statement of statements) await client.query(statement);
    });
  }

  /** The schema made (again, if the server was down at open). */
  private schemaReady(): Promise<void> {
    return this.made.ready();
  }

  /** The qualified table of a collection. */
  table(collection: string): string {
    if (collection === CHECKPOINTS) throw new Error(`${CHECKPOINTS} is the checkpoints' table, not a collection`);
    return `${this.schema}.${identifier(collection)}`;
  }

  /** The collection's table, made on its first use by this store object. */
  tableReady(collection: string): Promise<void> {
    let made = this.tables.get(collection);
    if (!made) {
      made = (async () => {
        await this.schemaReady();
        try {
          const sealed = this.sealings.has(collection);
          await this.locked(`table ${this.schemaName}.${collection}`, [
            `CREATE TABLE IF NOT EXISTS ${this.table(collection)} (id text COLLATE "C" PRIMARY KEY, revision double precision NOT NULL, doc jsonb NOT NULL${sealed ? ', key_id bigint NOT NULL, sealed text NOT NULL' : ''})`,
          ]);
          if (sealed) await this.checkSealedTable(collection);
        } catch (error) {
          throw unavailable(error);
        }
      })();
      made.catch(() => this.tables.delete(collection));
      this.tables.set(collection, made);
    }
    return made;
  }

  /** The unit of work of the caller, if it is in one that is still open. */
  private readonly units = new AsyncLocalStorage<Unit>();

  private unit(): Unit | null {
    const unit = this.units.getStore();
    return unit?.open ? unit : null;
  }

  /** Whether the caller is in a unit whose transaction has begun (its statements go on the unit's connection). */
  inUnitTransaction(): boolean {
    return this.unit()?.begun != null;
  }

  /** `work` outside any unit: on the pool (reads batched across callers, which must not run on one unit's connection). */
  outsideUnits<T>(work: () => Promise<T>): Promise<T> {
    return this.units.exit(work);
  }

  /** A query; any failure to reach the server as StoreUnavailableError. In a unit that has begun, on its connection. */
  async query<R extends object>(query: QueryConfig | string, values?: unknown[]): Promise<QueryResult<R>> {
    try {
      const unit = this.unit();
      if (unit?.begun) return await unit.query<R>(await unit.begun, statement(query, values));
      return await this.pool.query<R>(statement(query, values));
    } catch (error) {
      throw unavailable(error);
    }
  }

  /**
   * A write (in a unit: on its connection, its transaction begun by the first): a failure the server made (not the
   * statement's own fault) is remembered for the health check.
   */
  async write<R extends object>(query: QueryConfig | string, values?: unknown[]): Promise<QueryResult<R>> {
    try {
      const unit = this.unit();
      const result = unit
        ? await unit.query<R>(await (unit.begun ??= this.begin()), statement(query, values))
        : await this.pool.query<R>(statement(query, values));
      this.writeFailures.succeeded();
      return result;
    } catch (error) {
      if (!STATEMENT_FAULTS.test(sqlStateOf(error) ?? '')) this.writeFailures.failed(error);
      throw unavailable(error);
    }
  }

  /** A connection of the pool in a transaction just begun. */
  private async begin(): Promise<PoolClient> {
    const client = await this.pool.connect();
    // The server may end it while the unit holds it between statements (a restart): node-postgres then emits an error
    // event, which with no listener ends the process. The unit's next statement fails instead.
    client.on('error', connectionLost);
    try {
      await client.query('BEGIN');
      return client;
    } catch (error) {
      client.removeListener('error', connectionLost);
      client.release(error as Error);
      throw error;
    }
  }

  /**
   * `apply` then `save` in one transaction, begun by their first write (`CheckpointStore.atomically`); `save` alone,
   * with no transaction, when `apply` wrote nothing. Within a unit already under way, both join it.
   */
  private async atomically<R>(apply: () => Promise<void>, save: () => Promise<R>): Promise<R> {
    if (this.unit()) {
      await apply();
      return save();
    }
    const unit = new Unit();
    let result: R;
    try {
      await this.units.run(unit, apply);
      // Nothing written: no transaction to tie the save to.
      if (!unit.begun) {
        unit.open = false;
        return await save();
      }
      result = await this.units.run(unit, save);
    } catch (error) {
      unit.open = false;
      await this.end(unit, 'ROLLBACK').catch(() => undefined);
      throw error;
    }
    unit.open = false;
    await this.end(unit, 'COMMIT');
    return result;
  }

  /** Ends a unit's transaction, if begun, and gives its connection back (dropped when it failed: it may be broken). */
  private async end(unit: Unit, how: 'COMMIT' | 'ROLLBACK'): Promise<void> {
    const client = await unit.begun?.catch(() => null);
    if (!client) return;
    try {
      // After the statements its work left running, if any.
      await unit.query(client, how);
      client.removeListener('error', connectionLost);
      client.release();
    } catch (error) {
      client.removeListener('error', connectionLost);
      client.release(error as Error);
      if (how === 'COMMIT' && !STATEMENT_FAULTS.test(sqlStateOf(error) ?? '')) this.writeFailures.failed(error);
      throw unavailable(error);
    }
  }

  collection<T extends Document>(name: string): Collection<T> {
    this.handedOut.add(name);
    const sealing = this.sealings.get(name);
    if (!sealing) return new PostgresCollection<T>(this, name);
    return new SealedCollection<T>(this.sealedStore, this.ownerKeys(), name, this.table(name), sealing, () => this.tableReady(name));
  }

  seal(collection: string, sealing: Sealing): void {
    if (this.handedOut.has(collection) && !this.sealings.has(collection))
      throw new Error(`read-model collection ${collection} is sealed after its first use`);
    this.sealings.set(collection, sealing);
  }

  /** The owner's key destroyed and scrubbed (postgres-sealed.ts), when this store seals any collection. */
  async forgetOwner(owner: string): Promise<void> {
    if (this.sealings.size > 0) await this.ownerKeys().destroy(owner);
  }

  private ownerKeys(): OwnerKeys {
    return (this.ownerKeysMade ??= new OwnerKeys(this.sealedStore));
  }

  /** A table made plain (before its collection was sealed) cannot hold sealed rows: it must be rebuilt. */
  private async checkSealedTable(collection: string): Promise<void> {
    const { rows } = await this.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 AND column_name = 'sealed'`,
      [this.schemaName, collection],
    );
    if (rows[0].n === 0)
      throw new Error(
        `read-model table ${this.schemaName}.${collection} holds plain documents but its collection is sealed: drop it and let the projections rebuild it from the event store`,
      );
  }

  /** What a sealed collection uses of this store. */
  private sealedStoreOf(pool: Pool): SealedStore {
    return {
      pool,
      qualified: (name) => `${this.schema}.${identifier(name)}`,
      query: async <R extends object>(text: string, values: unknown[] = [], isNamed = false) =>
        (await this.query<R>(isNamed ? named(text) : text, values)).rows,
      write: async <R extends object>(text: string, values: unknown[] = []) => (await this.write<R>(text, values)).rows,
      schemaReady: () => this.schemaReady(),
      // In a unit's transaction not waited for, as a plain collection's (its row locks may hold another's DDL back).
      statistics: async (collection, fields) => {
        const made = this.ensureStatistics(collection, fields);
        if (this.inUnitTransaction()) void made.catch(() => undefined);
        else await made;
      },
      unavailable,
      outsideUnits: (work) => this.outsideUnits(work),
      inUnitTransaction: () => this.inUnitTransaction(),
      getsOf: (name, readAll) => this.getsOf(name, readAll),
    };
  }

  /** Each collection's reads by id, sent together when they pile up (every write reads its head and its snapshot). */
  private readonly gets = new Map<string, BatchedReads<string, Document | null>>();

  getsOf(name: string, readAll: (ids: string[]) => Promise<Array<Document | null>>): BatchedReads<string, Document | null> {
    let gets = this.gets.get(name);
    if (!gets) this.gets.set(name, (gets = new BatchedReads(readAll)));
    return gets;
  }

  async ensureIndex(collection: string, keys: Record<string, 1 | -1>): Promise<void> {
    const fields = Object.keys(keys);
    if (fields.length === 0) return;
    await this.tableReady(collection);
    const columns = fields.flatMap((field) => {
      if (field !== '_id') checkFieldName(field);
      return keySql(field).map((expression) => `${expression} ${keys[field] === -1 ? 'DESC' : 'ASC'}`);
    });
    try {
      await this.locked(`table ${this.schemaName}.${collection}`, [
        `CREATE INDEX IF NOT EXISTS ${this.indexName(collection, keys)} ON ${this.table(collection)} (${columns.join(', ')})`,
      ]);
    } catch (error) {
      throw unavailable(error);
    }
    // The three expressions of a key field together (an index's statistics are each expression's alone).
    await this.ensureStatistics(collection, fields);
  }

  async dropIndex(collection: string, keys: Record<string, 1 | -1>): Promise<void> {
    await this.tableReady(collection);
    await this.query(`DROP INDEX IF EXISTS ${this.schema}.${this.indexName(collection, keys)}`);
  }

  /**
   * Statistics on the three expressions of each of `fields` (made once per field by this store object), filled by the
   * next ANALYZE (autovacuum's, or `analyze`). Without them PostgreSQL guesses each term of a condition on a field no
   * index covers at 0.5%, and the three terms together at one row in eight million: a user's page filtered on such a
   * field (`deleted: false`) was sorted whole instead of read from the index in order and stopped at its limit.
   */
  async ensureStatistics(collection: string, fields: readonly string[]): Promise<void> {
    const missing = fields.filter((field) => field !== '_id' && !this.statistics.has(`${collection}\0${field}`));
    if (missing.length === 0) return;
    for (const field of missing) this.statistics.add(`${collection}\0${field}`);
    await this.tableReady(collection);
    const statements = missing.map(
      (field) =>
        `CREATE STATISTICS IF NOT EXISTS ${this.schema}.${identifier(`s_${hashed(`${collection}\0${field}`, 24)}`)} (mcv, dependencies) ON ${keySql(field).join(', ')} FROM ${this.table(collection)}`,
    );
    try {
      await this.locked(`table ${this.schemaName}.${collection}`, statements);
    } catch (error) {
      for (const field of missing) this.statistics.delete(`${collection}\0${field}`);
      throw unavailable(error);
    }
  }

  /** An index's name: from its collection and keys (short enough whatever the collection's name). */
  private indexName(collection: string, keys: Record<string, 1 | -1>): string {
    const spec = Object.entries(keys)
      .map(([field, direction]) => `${field}:${direction}`)
      .join(',');
    return identifier(`i_${collection.replace(/[^A-Za-z0-9_]/g, '').slice(0, 30)}_${hashed(`${collection}\0${spec}`, 20)}`);
  }

  checkpoints(): CheckpointStore {
    const table = `${this.schema}.${identifier(CHECKPOINTS)}`;
    const load = named(`SELECT position::text AS position FROM ${table} WHERE name = $1`);
    const save = named(
      `INSERT INTO ${table} (name, position) VALUES ($1, $2::numeric) ON CONFLICT (name) DO UPDATE SET position = excluded.position`,
    );
    return {
      load: async (name) => {
        await this.schemaReady();
        const { rows } = await this.query<{ position: string }>(load, [name]);
        return rows.length ? BigInt(rows[0].position) : null;
      },
      save: async (name, position) => {
        await this.schemaReady();
        await this.write(save, [name, position.toString()]);
      },
      atomically: (apply, then) => this.atomically(apply, then),
    };
  }

  /** Up when the server answers and takes writes (not a standby), and the last write did not fail (or a probe now succeeds). */
  async ping(): Promise<boolean> {
    try {
      if (this.writeFailures.current() !== null) {
        await this.query('SELECT pg_current_xact_id()');
        this.writeFailures.succeeded();
      }
      const { rows } = await this.query<{ writable: boolean }>('SELECT NOT pg_is_in_recovery() AS writable');
      return rows[0].writable;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.made.settled();
    await this.pool.end();
  }
}

class PostgresCollection<T extends Document> implements Collection<T> {
  private readonly table: string;

  constructor(
    private readonly store: PostgresReadModelStore,
    private readonly name: string,
  ) {
    this.table = store.table(name);
  }

  private async read<R extends object>(query: QueryConfig | string, values?: unknown[]): Promise<R[]> {
    await this.store.tableReady(this.name);
    return (await this.store.query<R>(query, values)).rows;
  }

  private async write<R extends object>(query: QueryConfig | string, values?: unknown[]): Promise<QueryResult<R>> {
    await this.store.tableReady(this.name);
    return this.store.write<R>(query, values);
  }

  async get(id: string): Promise<T | null> {
    // In a unit's transaction: on its connection, alone (it may read the unit's own writes).
    if (this.store.inUnitTransaction()) return (await this.getEach([id]))[0];
    return (await this.store.getsOf(this.name, (ids) => this.store.outsideUnits(() => this.getEach(ids))).read(id)) as T | null;
  }

  /** Each id's document or null, in the ids' order: one round trip. */
  private async getEach(ids: string[]): Promise<Array<T | null>> {
    if (ids.length === 1) {
      const rows = await this.read<{ doc: T }>(named(`SELECT doc FROM ${this.table} WHERE id = $1`), ids);
      return [rows[0]?.doc ?? null];
    }
    const rows = await this.read<{ id: string; doc: T }>(named(`SELECT id, doc FROM ${this.table} WHERE id = ANY($1::text[])`), [ids]);
    const byId = new Map(rows.map((row) => [row.id, row.doc]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  async getMany(ids: readonly string[]): Promise<T[]> {
    if (ids.length === 0) return [];
    const rows = await this.read<{ doc: T }>(named(`SELECT doc FROM ${this.table} WHERE id = ANY($1::text[])`), [[...new Set(ids)]]);
    return rows.map((row) => row.doc);
  }

  /**
   * The fields a filter or a sort names get statistics (`ensureStatistics`): a failure to make them fails no query. Not
   * waited for in a unit's transaction: they are made on another connection under a lock that a replica making an
   * index may hold while it waits for this transaction's rows.
   */
  private async statistics(filter: Filter | PreparedFilter, sort?: Sort): Promise<void> {
    const made = this.store
      .ensureStatistics(this.name, [...new Set([...fieldsOf(filter), ...Object.keys(sort ?? {})])])
      .catch(() => undefined);
    if (!this.store.inUnitTransaction()) await made;
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    await this.statistics(filter, options.sort);
    const where = whereSql(filter);
    const limit = options.limit === undefined ? '' : ` LIMIT ${Math.max(0, Math.floor(options.limit))}`;
    const rows = await this.read<{ doc: T }>(
      `SELECT doc FROM ${this.table} WHERE ${where.sql}${orderSql(options.sort)}${limit}`,
      where.params,
    );
    return rows.map((row) => row.doc);
  }

  prepareFind<K extends keyof T & string>(
    filter: PreparedFilter,
    { sort, select }: PreparedFindOptions<K>,
  ): PreparedFind<{ [F in K]: T[F] | null }> {
    const fields = select.map((field) => (field === '_id' ? field : checkFieldName(field)));
    const where = whereSql(filter);
    let statistics: Promise<void> | null = null;
    const made = () => (statistics ??= this.statistics(filter, sort));
    const columns = fields.map((field, i) => `${field === '_id' ? 'to_jsonb(id)' : `doc->'${field}'`} AS c${i}`).join(', ');
    // The limit is written into the statement, one statement per limit asked (pages have a few sizes): with a parameter
    // instead, the generic plan PostgreSQL settles on after five runs guesses a tenth of the rows and sorts a user's
    // matches rather than read the first few from the index in order.
    const statements = new Map<number | undefined, QueryConfig>();
    const statementFor = (limit: number | undefined) => {
      let statement = statements.get(limit);
      if (!statement) {
        const limited = limit === undefined ? '' : ` LIMIT ${limit}`;
        statements.set(limit, (statement = named(`SELECT ${columns} FROM ${this.table} WHERE ${where.sql}${orderSql(sort)}${limited}`)));
      }
      return statement;
    };
    type Row = { [F in K]: T[F] | null };
    return async (values, limit) => {
      // A value of another type than its param's is refused here (paramValue), before anything is sent.
      const params = bindValues(where.params, values);
      if (this.store.inUnitTransaction()) void made();
      else await made();
      const statement = statementFor(limit === undefined ? undefined : Math.max(0, Math.floor(limit)));
      const rows = await this.read<Record<string, unknown>>(statement, params);
      return rows.map((row) => {
        const result: Record<string, unknown> = {};
        fields.forEach((field, i) => (result[field] = row[`c${i}`] ?? null));
        return result as Row;
      });
    };
  }

  async count(filter: Filter): Promise<number> {
    await this.statistics(filter);
    const where = whereSql(filter);
    const rows = await this.read<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.table} WHERE ${where.sql}`, where.params);
    return rows[0].n;
  }

  async upsertIfNewer(doc: T & VersionedDocument): Promise<boolean> {
    const result = await this.write(
      named(
        `INSERT INTO ${this.table} AS stored (id, revision, doc) VALUES ($1, $2, $3::jsonb)
         ON CONFLICT (id) DO UPDATE SET revision = excluded.revision, doc = excluded.doc WHERE stored.revision < excluded.revision`,
      ),
      [doc._id, doc.revision, JSON.stringify(doc)],
    );
    return result.rowCount === 1;
  }

  async upsertManyIfNewer(docs: ReadonlyArray<T & VersionedDocument>): Promise<boolean[]> {
    if (docs.length === 0) return [];
    // In id order: two batches of the same documents lock their rows in the same order.
    const result = await this.write<{ id: string }>(
      named(
        `INSERT INTO ${this.table} AS stored (id, revision, doc)
         SELECT d->>'_id', (d->>'revision')::double precision, d FROM jsonb_array_elements($1::jsonb) AS e(d) ORDER BY d->>'_id' COLLATE "C"
         ON CONFLICT (id) DO UPDATE SET revision = excluded.revision, doc = excluded.doc WHERE stored.revision < excluded.revision
         RETURNING id`,
      ),
      [JSON.stringify(docs)],
    );
    const written = new Set(result.rows.map((row) => row.id));
    return docs.map((doc) => written.has(doc._id));
  }

  async updateMany(filter: Filter, set: Partial<T>): Promise<number> {
    const fields = { ...set } as Record<string, unknown>;
    // The id cannot change (MongoDB refuses it); the revision column follows the document's.
    delete fields._id;
    const revision = typeof fields.revision === 'number' ? fields.revision : undefined;
    const where = whereSql(filter, revision === undefined ? 1 : 2);
    const setRevision = revision === undefined ? '' : ', revision = $2';
    const result = await this.write(`UPDATE ${this.table} SET doc = doc || $1::jsonb${setRevision} WHERE ${where.sql}`, [
      JSON.stringify(fields),
      ...(revision === undefined ? [] : [revision]),
      ...where.params,
    ]);
    return result.rowCount ?? 0;
  }

  async deleteMany(filter: Filter): Promise<number> {
    const where = whereSql(filter);
    const result = await this.write(`DELETE FROM ${this.table} WHERE ${where.sql}`, where.params);
    return result.rowCount ?? 0;
  }
}
