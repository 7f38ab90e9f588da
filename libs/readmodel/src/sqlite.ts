import Database from 'better-sqlite3';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import { StoreUnavailableError, workerEntry } from '@udp/eventstore';
import type { CheckpointerData } from './sqlite-checkpointer';
import type { CheckpointStore, Collection, Document, Filter, FindOptions, ReadModelStore, VersionedDocument } from './port';
import {
  checkFieldName,
  columnOf,
  columnValue,
  columnValueSql,
  keyColumnOf,
  orderSql,
  partitionKey,
  whereSql,
  type SqlCondition,
} from './sqlite-filter';

export interface SqliteReadModelsLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface SqliteReadModelsOptions {
  /** DATA_DIR/<service>/read-models.sqlite in the embedded mode. */
  file: string;
  /**
   * The highest position the event log ever gave. Read models whose checkpoints are beyond it did not come from
   * this log (the events file was replaced or restored): they are dropped and rebuilt.
   */
  head?: () => bigint;
  /** Writes gathered in one transaction at most (default 10,000)... */
  maxBatch?: number;
  /** ...and for this long at most (default 50 ms): what a crash may lose, and replay. */
  commitEveryMs?: number;
  /**
   * Erasures rewrite the file (VACUUM) at most this often (default 10 s): a rewrite holds the event loop (3 s for
   * 1,000,000 history entries), and erasures that come together share one.
   */
  scrubEveryMs?: number;
  /** How often the checkpointer thread copies the write-ahead log into the file (default 200 ms). */
  checkpointEveryMs?: number;
  /**
   * Read models with no checkpoint yet (a new file) get their indexes only when `caughtUp` is called: for a service
   * whose projectors rebuild them at start, before it answers (libs/runtime, startServiceProjections).
   */
  deferIndexes?: boolean;
  logger?: SqliteReadModelsLogger;
}

/**
 * The embedded read models: documents as JSON text in a SQLite file beside the events, off the JavaScript heap, so
 * the process holds what it reads and not every document, and a start loads nothing (the projectors go on from
 * their checkpoints, which live in the same file).
 *
 * - Writes are gathered in one transaction for up to `commitEveryMs` (or `maxBatch` writes): a projector applying
 *   a commit of 3000 events pays one commit, not 3000, and 2,000 writes a second touching the same index pages
 *   write them to the log a few times a second, not 2,000 times. Checkpoints are saved in the same transaction as
 *   the documents they cover, so after a crash the two agree and the projectors replay what was lost. The file is
 *   derived data (synchronous=NORMAL): a power loss may lose the last transactions, never make them disagree.
 * - The write-ahead log is copied into the file by a thread of its own (sqlite-checkpointer.ts), and by this
 *   connection only past 64 MiB: checkpoints every 1000 pages (SQLite's default), with their fsyncs, took 30% of
 *   a replay's time on the event loop (1M documents: 22.6 s, now 15.9 s).
 * - One connection reads and writes, so a read sees every write made before it, committed or not, as the
 *   memory store does.
 * - Erasure: `deleteMany` commits at once, with secure_delete (deleted rows zeroed); `scrub` then rewrites the file
 *   (VACUUM), which alone removes stale copies of changed rows from free page space, and truncates the write-ahead
 *   log, so the deleted bytes are in neither file. An index keeps its first field as a hash (`udp_key`), not
 *   the value: interior index pages keep copies of keys that deletion does not reach, and the first field is the
 *   user's id in every per-user read model. Other fields of an index (dates, item ids) may stay in interior pages.
 *   (The key is a column, `k_<field>`, filled by this code: computed inside SQLite it cost a call into JavaScript
 *   per index per write.)
 */
export class SqliteReadModelStore implements ReadModelStore {
  private readonly collections = new Map<string, SqliteCollection<Document>>();
  private readonly statements = new LRUCache<string, Database.Statement>({ max: 1000 });
  private readonly maxBatch: number;
  private readonly commitEveryMs: number;
  private readonly scrubEveryMs: number;
  /** Rows deleted since the file was last rewritten; when it was; the rewrite under way or waited for. */
  private unscrubbed = false;
  private lastScrubAt = Number.NEGATIVE_INFINITY;
  private scrubbing: Promise<void> | null = null;
  private writesInBatch = 0;
  private commitTimer: NodeJS.Timeout | null = null;
  /** A commit that failed (disk full): the writes since the last one are gone, so the store stays unusable. */
  private failure: Error | null = null;
  private readonly checkpointStore: CheckpointStore;
  private readonly checkpointer: Worker;
  private readonly checkpointerExited: Promise<unknown>;
  /** Set while the read models are rebuilt from nothing (no checkpoint yet): the indexes `caughtUp` builds. */
  private deferredIndexes: string[] | null;
  private readonly logger?: SqliteReadModelsLogger;
  private readonly saveCheckpoint: Database.Statement<[string, string]>;
  /** Checkpoints saved in the open transaction, written into it as it commits. */
  private readonly pendingCheckpoints = new Map<string, bigint>();

  private constructor(
    private readonly db: Database.Database,
    options: SqliteReadModelsOptions,
  ) {
    this.maxBatch = options.maxBatch ?? 10_000;
    this.commitEveryMs = options.commitEveryMs ?? 50;
    this.scrubEveryMs = options.scrubEveryMs ?? 10_000;
    this.logger = options.logger;
    this.deferredIndexes = options.deferIndexes && db.prepare('SELECT count(*) FROM checkpoints').pluck().get() === 0 ? [] : null;
    // The checkpointer thread copies the log as it grows; this connection checkpoints only once the log passes
    // 64 MiB (under sustained writes a background copy never catches up, and only a writer's checkpoint lets the
    // log start over), and then copies only what the thread has not.
    db.pragma('wal_autocheckpoint = 16384');
    const workerData: CheckpointerData = { file: options.file, intervalMs: options.checkpointEveryMs ?? 200 };
    this.checkpointer = new Worker(workerEntry(__dirname, 'sqlite-checkpointer'), { workerData });
    this.checkpointerExited = new Promise((resolve) => this.checkpointer.once('exit', resolve));
    this.checkpointer.unref();
    // Without it the log would grow for ever: this connection checkpoints again, on the event loop.
    this.checkpointer.on('error', (error) => {
      options.logger?.error({ err: error }, 'read-model checkpointer failed; checkpointing on the main thread');
      if (db.open) db.pragma('wal_autocheckpoint = 1000');
    });
    const load = db.prepare<[string], string>('SELECT position FROM checkpoints WHERE name = ?').pluck();
    this.saveCheckpoint = db.prepare(
      'INSERT INTO checkpoints (name, position) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET position = excluded.position',
    );
    this.checkpointStore = {
      load: async (name) => {
        const position = this.pendingCheckpoints.get(name) ?? this.read(() => load.get(name));
        return position === undefined ? null : BigInt(position);
      },
      // Written once per transaction, when it commits: a projector saves one after every event it applies.
      save: async (name, position) => {
        this.write(() => this.pendingCheckpoints.set(name, position));
      },
    };
  }

  static async open(options: SqliteReadModelsOptions): Promise<SqliteReadModelStore> {
    mkdirSync(dirname(options.file), { recursive: true });
    let db = connect(options.file);
    const beyond = beyondHead(db, options.head?.());
    if (beyond !== null) {
      db.close();
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${options.file}${suffix}`, { force: true });
      options.logger?.warn({ file: options.file, problem: beyond }, 'saved read models dropped; rebuilding them from the event log');
      db = connect(options.file);
    }
    return new SqliteReadModelStore(db, options);
  }

  collection<T extends Document>(name: string): Collection<T> {
    let collection = this.collections.get(name);
    if (!collection) {
      collection = new SqliteCollection<Document>(this, name);
      this.collections.set(name, collection);
    }
    return collection as unknown as Collection<T>;
  }

  async ensureIndex(collection: string, keys: Record<string, 1 | -1>): Promise<void> {
    const fields = Object.keys(keys).map(checkFieldName);
    if (fields.length === 0) return;
    const target = this.collection(collection) as unknown as SqliteCollection<Document>;
    this.commit();
    target.addKeyColumn(fields[0]);
    for (const field of fields.slice(1)) target.addColumn(field);
    const columns = fields.map((field, i) => `${i === 0 ? keyColumnOf(field) : columnOf(field)}${keys[field] === -1 ? ' DESC' : ''}`);
    const name = `"${target.table.slice(1, -1)}__${fields.map((f) => `${f}_${keys[f] === -1 ? 'd' : 'a'}`).join('__')}"`;
    const create = `CREATE INDEX IF NOT EXISTS ${name} ON ${target.table} (${columns.join(', ')})`;
    if (this.deferredIndexes) this.deferredIndexes.push(create);
    else this.db.exec(create);
  }

  /**
   * Builds the indexes put off while the read models were rebuilt from nothing: built at once over a million
   * documents they cost a third of what keeping them up to date document by document did (docs/performance.md).
   */
  async caughtUp(): Promise<void> {
    const deferred = this.deferredIndexes;
    if (!deferred) return;
    this.deferredIndexes = null;
    this.commit();
    const started = performance.now();
    for (const create of deferred) this.db.exec(create);
    if (deferred.length)
      this.logger?.info({ indexes: deferred.length, ms: Math.round(performance.now() - started) }, 'read-model indexes built');
  }

  checkpoints(): CheckpointStore {
    return this.checkpointStore;
  }

  async ping(): Promise<boolean> {
    if (this.failure || !this.db.open) return false;
    try {
      this.statement('SELECT count(*) FROM checkpoints').get();
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (!this.db.open) return;
    if (this.commitTimer) clearTimeout(this.commitTimer);
    this.commitTimer = null;
    this.commit();
    this.checkpointer.postMessage('stop');
    await this.checkpointerExited;
    this.db.close();
  }

  /** The database, for a collection's own statements (its table and columns). */
  get database(): Database.Database {
    return this.db;
  }

  /** A prepared statement for `sql`, kept for the next query of the same shape. */
  statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  read<R>(work: () => R): R {
    if (this.failure) throw unavailable(this.failure);
    return work();
  }

  /** Runs `work` in the current write transaction, opening one (committed within `commitEveryMs`) if none is. */
  write<R>(work: () => R): R {
    if (this.failure) throw unavailable(this.failure);
    if (!this.db.inTransaction) {
      this.db.exec('BEGIN');
      this.writesInBatch = 0;
      if (!this.commitTimer) {
        this.commitTimer = setTimeout(() => {
          this.commitTimer = null;
          this.commit();
        }, this.commitEveryMs);
        // A process that has nothing else to do is not kept alive for it: close() commits.
        this.commitTimer.unref();
      }
    }
    let result: R;
    try {
      result = work();
    } catch (error) {
      // SQLite rolled the whole transaction back (disk full, I/O error): the batch's documents are gone while their
      // projectors went on. As for a failed commit, only a restart (a replay from the checkpoints) makes them whole.
      if (!this.db.inTransaction) this.failed(error as Error);
      throw error;
    }
    if (++this.writesInBatch >= this.maxBatch) this.commit();
    return result;
  }

  /** Commits the open transaction, if any. */
  commit(): void {
    if (!this.db.open || !this.db.inTransaction) return;
    try {
      for (const [name, position] of this.pendingCheckpoints) this.saveCheckpoint.run(name, position.toString());
      this.pendingCheckpoints.clear();
      this.db.exec('COMMIT');
    } catch (error) {
      // Nothing since the last commit is stored, yet the projectors went on: only a restart (a replay from the
      // checkpoints, which were in the same transaction) makes the read models whole again. Health says DOWN.
      this.failed(error as Error);
    }
  }

  private failed(error: Error): void {
    this.failure ??= error;
    this.pendingCheckpoints.clear();
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
  }

  /**
   * Deletes in the current write transaction, as every write (secure_delete zeroes the rows as they go); `scrub`
   * then commits and leaves no byte of the deleted rows in the files. A transaction of its own per deletion cost an
   * erasure of 50,000 history entries (and their trending counts) 25 s of commits on the event loop.
   */
  deleteRows(sql: string, params: unknown[]): number {
    const statement = this.statement(sql);
    const changes = this.write(() => statement.run(...params).changes);
    if (changes > 0) this.unscrubbed = true;
    return changes;
  }

  /**
   * Leaves no byte of the rows deleted before this call in the files: rewrites the file (VACUUM), then copies the
   * write-ahead log (which holds earlier images of the pages) back and truncates it. secure_delete zeroes a deleted
   * row, but not the stale copies an earlier change of the row left in free page space when SQLite rebuilt the page
   * (found by review: 3 copies of an erased id among 20,000 documents changed in place), nor keys in interior index
   * pages. Erasures within `scrubEveryMs` of the last rewrite wait for the next one.
   */
  async scrub(): Promise<void> {
    while (this.unscrubbed) {
      this.scrubbing ??= this.rewriteSoon().finally(() => (this.scrubbing = null));
      await this.scrubbing;
    }
  }

  private async rewriteSoon(): Promise<void> {
    const wait = this.lastScrubAt + this.scrubEveryMs - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (this.failure) throw unavailable(this.failure);
    this.commit();
    this.unscrubbed = false;
    try {
      this.db.exec('VACUUM');
      await this.truncateLog();
    } catch (error) {
      this.unscrubbed = true;
      throw error;
    } finally {
      this.lastScrubAt = Date.now();
    }
  }

  /**
   * Copies the log back and truncates it. A checkpoint under way (the checkpointer thread's) makes SQLite answer busy
   * at once, and a reader of another process keeps the log: tried again for up to 5 s, without holding the event
   * loop, then the erasure fails and is tried again.
   */
  private async truncateLog(): Promise<void> {
    const until = Date.now() + 5_000;
    for (;;) {
      this.commit();
      const [result] = this.db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number; log: number; checkpointed: number }>;
      if (!result || (result.busy === 0 && result.log === result.checkpointed)) return;
      if (Date.now() > until) {
        throw new StoreUnavailableError(
          'read models',
          `the write-ahead log could not be truncated after a deletion (busy ${result.busy}, ${result.checkpointed} of ${result.log} pages copied)`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

const TABLE_NAME = /^[A-Za-z0-9_-]+$/;

class SqliteCollection<T extends Document> implements Collection<T> {
  readonly table: string;
  /** The first fields of the collection's indexes, each with a column of its key (`k_<field>`): an equality on one is also asked of its key. */
  readonly partitionFields = new Set<string>();
  /** The fields with a column of their own (`f_<field>`): those the collection's indexes name. */
  private readonly columns = new Set<string>();
  private statements!: ReturnType<SqliteCollection<T>['prepare']>;
  /**
   * Documents handed out read-only, by their JSON text: a document read again unchanged is the same object, so
   * what a caller derived from it (history-queries.ts: an entry's answer text) is found again without parsing.
   */
  private readonly readOnlyDocuments = new LRUCache<string, T>({ max: 50_000 });

  constructor(
    private readonly store: SqliteReadModelStore,
    name: string,
  ) {
    if (!TABLE_NAME.test(name)) throw new Error(`unsupported read-model collection name: ${JSON.stringify(name)}`);
    this.table = `"rm_${name}"`;
    store.commit();
    const db = store.database;
    // `key`: the id's hash (the index on it keeps no id; see the class comment of SqliteReadModelStore).
    db.exec(`CREATE TABLE IF NOT EXISTS ${this.table} (id TEXT NOT NULL, key INTEGER NOT NULL, revision REAL, doc TEXT NOT NULL)`);
    db.exec(`CREATE INDEX IF NOT EXISTS "rm_${name}__key" ON ${this.table} (key)`);
    for (const { name: column } of db.pragma(`table_info(${this.table})`) as Array<{ name: string }>) {
      if (column.startsWith('f_')) this.columns.add(column.slice(2));
      if (column.startsWith('k_')) this.partitionFields.add(column.slice(2));
    }
    this.statements = this.prepare();
  }

  /** Gives `field` a column of its own, filled from the documents already stored. */
  addColumn(field: string): void {
    if (this.columns.has(field)) return;
    this.addFilledColumn(columnOf(field), columnValueSql(field));
    this.columns.add(field);
    this.statements = this.prepare();
  }

  /** Gives `field` a column of its own and one of its key (an index's first field), filled from the documents stored. */
  addKeyColumn(field: string): void {
    this.addColumn(field);
    if (this.partitionFields.has(field)) return;
    this.addFilledColumn(keyColumnOf(field), `udp_key(${columnOf(field)})`);
    this.partitionFields.add(field);
    this.statements = this.prepare();
  }

  private addFilledColumn(column: string, valueSql: string): void {
    const db = this.store.database;
    db.transaction(() => {
      db.exec(`ALTER TABLE ${this.table} ADD COLUMN ${column}`);
      db.exec(`UPDATE ${this.table} SET ${column} = ${valueSql}`);
    })();
  }

  private prepare() {
    const db = this.store.database;
    const columns = [...[...this.columns].map(columnOf), ...[...this.partitionFields].map(keyColumnOf)];
    return {
      columns: [...this.columns],
      keys: [...this.partitionFields],
      byId: db.prepare(`SELECT doc FROM ${this.table} WHERE key = ? AND id = ?`).pluck(),
      stored: db.prepare(`SELECT rowid, revision FROM ${this.table} WHERE key = ? AND id = ?`),
      insert: db.prepare(
        `INSERT INTO ${this.table} (id, key, revision, doc${columns.map((c) => `, ${c}`).join('')}) VALUES (?, ?, ?, ?${', ?'.repeat(columns.length)})`,
      ),
      replace: db.prepare(`UPDATE ${this.table} SET revision = ?, doc = ?${columns.map((c) => `, ${c} = ?`).join('')} WHERE rowid = ?`),
    };
  }

  async get(id: string): Promise<T | null> {
    const doc = this.store.read(() => this.statements.byId.get(partitionKey(id), id) as string | undefined);
    return doc === undefined ? null : (JSON.parse(doc) as T);
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    const where = this.where(filter);
    const limit = options.limit !== undefined ? ' LIMIT ?' : '';
    const statement = this.store
      .statement(`SELECT doc FROM ${this.table} WHERE ${where.sql}${orderSql(options.sort, this.columns)}${limit}`)
      .pluck();
    const params = options.limit !== undefined ? [...where.params, options.limit] : where.params;
    const texts = this.store.read(() => statement.all(...params) as string[]);
    if (!options.readOnly) return texts.map((text) => JSON.parse(text) as T);
    return texts.map((text) => {
      let doc = this.readOnlyDocuments.get(text);
      if (doc === undefined) this.readOnlyDocuments.set(text, (doc = JSON.parse(text) as T));
      return doc;
    });
  }

  async count(filter: Filter): Promise<number> {
    const where = this.where(filter);
    const statement = this.store.statement(`SELECT count(*) FROM ${this.table} WHERE ${where.sql}`).pluck();
    return this.store.read(() => statement.get(...where.params) as number);
  }

  async upsertIfNewer(doc: T & VersionedDocument): Promise<boolean> {
    const key = partitionKey(doc._id);
    const { stored, insert, replace, columns, keys } = this.statements;
    return this.store.write(() => {
      const row = stored.get(key, doc._id) as { rowid: number; revision: number | null } | undefined;
      if (row && row.revision !== null && row.revision >= doc.revision) return false;
      const fields = doc as unknown as Record<string, unknown>;
      const values = [
        ...columns.map((field) => columnValue(fields[field])),
        ...keys.map((field) => partitionKey(columnValue(fields[field]))),
      ];
      if (row) replace.run(doc.revision, JSON.stringify(doc), ...values, row.rowid);
      else insert.run(doc._id, key, doc.revision, JSON.stringify(doc), ...values);
      return true;
    });
  }

  async updateMany(filter: Filter, set: Partial<T>): Promise<number> {
    const entries = Object.entries(set).filter(([field]) => field !== '_id');
    for (const [field] of entries) checkFieldName(field);
    if (entries.length === 0) return this.count(filter);
    const where = this.where(filter);
    const given = entries.filter(([, value]) => value !== undefined);
    const removed = entries.filter(([, value]) => value === undefined);
    let doc = 'doc';
    if (given.length) doc = `json_set(${doc}, ${given.map(([field]) => `'$.${field}', json(?)`).join(', ')})`;
    if (removed.length) doc = `json_remove(${doc}, ${removed.map(([field]) => `'$.${field}'`).join(', ')})`;
    const inColumns = entries.filter(([field]) => this.columns.has(field));
    const inKeys = entries.filter(([field]) => this.partitionFields.has(field));
    const assignments = [
      `doc = ${doc}`,
      ...('revision' in set ? ['revision = ?'] : []),
      ...inColumns.map(([field]) => `${columnOf(field)} = ?`),
      ...inKeys.map(([field]) => `${keyColumnOf(field)} = ?`),
    ];
    const statement = this.store.statement(`UPDATE ${this.table} SET ${assignments.join(', ')} WHERE ${where.sql}`);
    const params = [
      ...given.map(([, value]) => JSON.stringify(value)),
      ...('revision' in set ? [typeof set.revision === 'number' ? set.revision : null] : []),
      ...inColumns.map(([, value]) => columnValue(value)),
      ...inKeys.map(([, value]) => partitionKey(columnValue(value))),
      ...where.params,
    ];
    return this.store.write(() => statement.run(...params).changes);
  }

  async deleteMany(filter: Filter): Promise<number> {
    const where = this.where(filter);
    return this.store.deleteRows(`DELETE FROM ${this.table} WHERE ${where.sql}`, where.params);
  }

  private where(filter: Filter): SqlCondition {
    return whereSql(filter, this.columns, this.partitionFields);
  }
}

function connect(file: string): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  // Derived data: a commit need not wait for the disk (a power loss loses the last ones, and their checkpoints).
  db.pragma('synchronous = NORMAL');
  db.pragma('secure_delete = ON');
  db.pragma('busy_timeout = 5000');
  // 32 MiB of pages: the figure RSS is held to (docs/performance.md); the operating system caches the rest.
  db.pragma('cache_size = -32768');
  db.function('udp_key', { deterministic: true }, (value: unknown) => partitionKey(value));
  db.exec('CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, position TEXT NOT NULL)');
  return db;
}

/** Why the saved read models cannot be trusted with this log, or null. */
function beyondHead(db: Database.Database, head: bigint | undefined): string | null {
  if (head === undefined) return null;
  const positions = db.prepare<[], string>('SELECT position FROM checkpoints').pluck().all();
  const highest = positions.reduce((max, p) => (BigInt(p) > max ? BigInt(p) : max), 0n);
  return highest > head ? `checkpoint ${highest} is beyond the event log's head ${head}` : null;
}

function unavailable(cause: Error): Error {
  return new StoreUnavailableError('read models', `a commit failed (${cause.message}); restart to rebuild from the checkpoints`, { cause });
}
