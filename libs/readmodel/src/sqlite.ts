import Database from 'better-sqlite3';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import { StoreUnavailableError, workerEntry } from '@udp/eventstore';
import type { CheckpointerData, CheckpointerMessage, CheckpointerReply } from './sqlite-checkpointer';
import { destroyFiles, nextGeneration, recordCurrent, settleGenerations } from './sqlite-generations';
import { paramValue } from './filter';
import type {
  CheckpointStore,
  Collection,
  Document,
  Filter,
  FindOptions,
  IndexOptions,
  PreparedFilter,
  PreparedFind,
  PreparedFindOptions,
  ReadModelStore,
  Scalar,
  VersionedDocument,
} from './port';
import {
  Bound,
  checkFieldName,
  columnOf,
  columnValue,
  columnValueSql,
  idKey,
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
  /** How often the checkpointer thread copies the write-ahead log into the file (default 200 ms). */
  checkpointEveryMs?: number;
  /** How long new writes may wait for the thread's copy of the log, and how soon it must answer to keep up (50 ms). */
  holdWritesMs?: number;
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
 * - The write-ahead log is copied into the file by a thread of its own (sqlite-checkpointer.ts), after each commit and
 *   every `checkpointEveryMs`: checkpoints every 1000 pages (SQLite's default), with their fsyncs, took 30% of a
 *   replay's time on the event loop (1M documents: 22.6 s, now 15.9 s). Only a writer lets the log start over, when
 *   its transaction begins with the whole log copied; under sustained writes the next transaction always began
 *   before the thread's copy ended, and the log grew until this connection checkpointed it itself at 64 MiB: 40-65 ms
 *   on the event loop, which other users' reads waited for (batch-load: their p99 46-60 ms). Past `HOLD_WRITES_AT`
 *   the store therefore holds new writes (not reads) until the thread has copied the commit just made, a few
 *   milliseconds, and the next transaction starts the log over. This connection still checkpoints past 256 MiB, should
 *   the thread fall behind.
 * - One connection reads and writes, so a read sees every write made before it, committed or not, as the
 *   memory store does.
 * - Erasure: deleted rows are zeroed as they go (secure_delete), but SQLite leaves copies of rows it moved in the free
 *   space of pages it rebuilt, and keys in interior index pages. `scrub` therefore copies the live rows into a new
 *   file (VACUUM INTO, in the checkpointer thread: a read, so this connection goes on reading and writing), replays
 *   into the copy the writes made since (in slices of a few milliseconds), switches to the copy in one short step,
 *   and overwrites the old file with zeros before removing it (sqlite-generations.ts). The event loop is never held
 *   for the copy, whatever the size of the file; erasures that come together share one compaction. An index keeps
 *   its first field as a hash (`udp_key`), not the value: the first field is the user's id in every per-user read
 *   model. (The key is a column, `k_<field>`, filled by this code: computed inside SQLite it cost a call into
 *   JavaScript per index per write.) What removes an erased user's ids from every page is the compaction, not the
 *   hash: the id index keeps the ids after their owner's hash (`idKey`), as the table keeps them, and the copy holds
 *   live rows only, its indexes built anew.
 */
/** The name of the index `ensureIndex` makes for these keys (fields and directions in order). */
const indexName = (target: { table: string }, keys: Record<string, 1 | -1>, included: readonly string[] = []) =>
  `"${target.table.slice(1, -1)}__${Object.keys(keys)
    .map((f) => `${f}_${keys[f] === -1 ? 'd' : 'a'}`)
    .join('__')}${included.length ? `__with_${included.join('_')}` : ''}"`;

export class SqliteReadModelStore implements ReadModelStore {
  private readonly collections = new Map<string, SqliteCollection<Document>>();
  private readonly statements = new LRUCache<string, Database.Statement>({ max: 1000 });
  private readonly maxBatch: number;
  private readonly commitEveryMs: number;
  private readonly checkpointEveryMs: number;
  private readonly holdWritesMs: number;
  /** Rows deleted and not yet compacted away (also kept in the file: `udp_meta.scrub_pending`, for a restart). */
  private unscrubbed: boolean;
  /** Deletions so far: a compaction that saw none during its run leaves nothing to scrub. */
  private deletions = 0;
  /** The compaction under way, and the one asked for after it (each erasure waits for one that starts after it). */
  private compaction: Promise<void> | null = null;
  private nextCompaction: Promise<void> | null = null;
  /** While a compaction runs: the writes made since its copy began, replayed into the copy before the switch. */
  private replayLog: ReplayOp[] | null = null;
  /** Counts schema changes (columns, indexes): one during a compaction makes its copy stale. */
  private schemaEpoch = 0;
  private closing = false;
  private writesInBatch = 0;
  private commitTimer: NodeJS.Timeout | null = null;
  /** A commit that failed (disk full): the writes since the last one are gone, so the store stays unusable. */
  private failure: Error | null = null;
  private readonly checkpointStore: CheckpointStore;
  private checkpointer!: Worker;
  private checkpointerExited!: Promise<unknown>;
  /**
   * Requests to checkpoint sent to the thread (each commit makes one); the log's size at its last answer, and whether
   * the thread keeps up (that answer copied all of the log, within `holdWritesMs` of its request).
   */
  private checkpointsAsked = 0;
  private logBytes = 0;
  private logCopied = false;
  /** Set while new writes wait for the thread to copy the log (see `HOLD_WRITES_AT`); `release` ends the wait. */
  private heldWrites: { until: number; done: Promise<void>; release(): void } | null = null;
  /** Set while the read models are rebuilt from nothing (no checkpoint yet): the indexes `caughtUp` builds. */
  private deferredIndexes: string[] | null;
  private readonly logger?: SqliteReadModelsLogger;
  private own!: ReturnType<typeof ownStatements>;
  /** Checkpoints saved in the open transaction, written into it as it commits. */
  private readonly pendingCheckpoints = new Map<string, bigint>();

  private constructor(
    private db: Database.Database,
    /** The file open now: `options.file`, or since a compaction the generation that replaced it. */
    private file: string,
    private readonly options: SqliteReadModelsOptions,
    /** A compaction's copy, written by replaying: no checkpointer thread, no commit timer. */
    private readonly copy = false,
  ) {
    this.maxBatch = options.maxBatch ?? 10_000;
    this.commitEveryMs = options.commitEveryMs ?? 50;
    this.checkpointEveryMs = options.checkpointEveryMs ?? 200;
    this.holdWritesMs = options.holdWritesMs ?? 50;
    this.logger = options.logger;
    this.deferredIndexes = !copy && options.deferIndexes && db.prepare('SELECT count(*) FROM checkpoints').pluck().get() === 0 ? [] : null;
    // Rebuilt from nothing, nothing served yet: the ids' index grows by one random key a document, all over a file of
    // gigabytes at an audience's scale, and 32 MiB of pages made most inserts read a page first (a rebuild of
    // 10,000,000 entries took 15 minutes). The cache goes back to its size, and its pages are freed, once caught up.
    if (this.deferredIndexes) db.pragma(`cache_size = -${REBUILD_CACHE_KIB}`);
    this.prepareOwn();
    this.unscrubbed = this.own.scrubPending.get() !== undefined;
    if (!copy) this.startCheckpointer();
    this.checkpointStore = {
      load: async (name) => {
        const position = this.pendingCheckpoints.get(name) ?? this.read(() => this.own.loadCheckpoint.get(name));
        return position === undefined ? null : BigInt(position);
      },
      // Written once per transaction, when it commits: a projector saves one after every event it applies.
      save: async (name, position) => {
        await this.whenWritable(() => this.write(() => this.pendingCheckpoints.set(name, position)));
      },
    };
  }

  /** The statements of the store itself, on the connection open now. */
  private prepareOwn(): void {
    this.own = ownStatements(this.db);
  }

  /**
   * The checkpointer thread copies the log as it grows; this connection checkpoints only once the log passes 256 MiB
   * (the thread fell behind, see `copyCommitted`), and then copies only what the thread has not.
   */
  private startCheckpointer(): void {
    const db = this.db;
    db.pragma('wal_autocheckpoint = 65536');
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const workerData: CheckpointerData = { file: this.file, intervalMs: this.checkpointEveryMs };
    const checkpointer = new Worker(workerEntry(__dirname, 'sqlite-checkpointer'), { workerData });
    this.checkpointer = checkpointer;
    this.checkpointerExited = new Promise((resolve) => checkpointer.once('exit', resolve));
    this.logBytes = 0;
    this.logCopied = false;
    this.releaseWrites();
    checkpointer.on('message', (reply: CheckpointerReply) => {
      if (!('checkpointed' in reply) || this.checkpointer !== checkpointer) return;
      this.logBytes = Math.max(0, reply.log) * pageSize;
      this.logCopied = reply.whole && performance.now() - reply.at < this.holdWritesMs;
      if (this.heldWrites && reply.checkpointed >= this.heldWrites.until) {
        // All of it copied: the transaction that opens next starts the log over.
        if (reply.whole) this.logBytes = 0;
        this.releaseWrites();
      }
    });
    checkpointer.unref();
    // Without it the log would grow for ever: this connection checkpoints again, on the event loop.
    checkpointer.on('error', (error) => {
      this.logger?.error({ err: error }, 'read-model checkpointer failed; checkpointing on the main thread');
      if (this.checkpointer !== checkpointer) return;
      this.logCopied = false;
      this.releaseWrites();
      if (db.open) db.pragma('wal_autocheckpoint = 1000');
    });
  }

  static async open(options: SqliteReadModelsOptions): Promise<SqliteReadModelStore> {
    mkdirSync(dirname(options.file), { recursive: true });
    // A compaction's file becomes `options.file` again; what a crash left of another is destroyed.
    settleGenerations(options.file);
    let db = connect(options.file);
    const beyond = beyondHead(db, options.head?.());
    if (beyond !== null) {
      db.close();
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${options.file}${suffix}`, { force: true });
      options.logger?.warn({ file: options.file, problem: beyond }, 'saved read models dropped; rebuilding them from the event log');
      db = connect(options.file);
    }
    return new SqliteReadModelStore(db, options.file, options);
  }

  collection<T extends Document>(name: string): Collection<T> {
    let collection = this.collections.get(name);
    if (!collection) {
      collection = new SqliteCollection<Document>(this, name);
      this.collections.set(name, collection);
    }
    return collection as unknown as Collection<T>;
  }

  async ensureIndex(collection: string, keys: Record<string, 1 | -1>, options: IndexOptions = {}): Promise<void> {
    const fields = Object.keys(keys).map(checkFieldName);
    if (fields.length === 0) return;
    const target = this.collection(collection) as unknown as SqliteCollection<Document>;
    this.schemaChanging();
    target.addKeyColumn(fields[0]);
    const included = (options.include ?? []).map(checkFieldName);
    for (const field of [...fields.slice(1), ...included]) target.addColumn(field);
    const columns = [
      ...fields.map((field, i) => `${i === 0 ? keyColumnOf(field) : columnOf(field)}${keys[field] === -1 ? ' DESC' : ''}`),
      ...included.map(columnOf),
    ];
    const create = `CREATE INDEX IF NOT EXISTS ${indexName(target, keys, included)} ON ${target.table} (${columns.join(', ')})`;
    // Put off during a rebuild, unless the projection queries by it: without it each of its queries scans the whole
    // table, and a rebuild of 50,000 watches of the last hours (trending) took a minute instead of seconds.
    if (this.deferredIndexes && !options.queriedByProjection) this.deferredIndexes.push(create);
    else this.db.exec(create);
  }

  async dropIndex(collection: string, keys: Record<string, 1 | -1>): Promise<void> {
    Object.keys(keys).forEach(checkFieldName);
    const target = this.collection(collection) as unknown as SqliteCollection<Document>;
    const name = indexName(target, keys);
    this.deferredIndexes = this.deferredIndexes && this.deferredIndexes.filter((create) => !create.includes(` ${name} `));
    const exists = this.db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?`).get(name.slice(1, -1));
    if (!exists) return;
    this.schemaChanging();
    this.db.exec(`DROP INDEX ${name}`);
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
    this.schemaEpoch++;
    const started = performance.now();
    for (const create of deferred) this.db.exec(create);
    if (deferred.length)
      this.logger?.info({ indexes: deferred.length, ms: Math.round(performance.now() - started) }, 'read-model indexes built');
    this.db.pragma(`cache_size = -${CACHE_KIB}`);
    this.db.pragma('shrink_memory');
  }

  checkpoints(): CheckpointStore {
    return this.checkpointStore;
  }

  /** Before a column or an index is added: the open transaction committed, a compaction's copy made stale. */
  schemaChanging(): void {
    this.commit();
    this.schemaEpoch++;
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
    // A compaction under way stops at its next step (its copy is destroyed); one asked for does not start.
    this.closing = true;
    await this.nextCompaction?.catch(() => undefined);
    await this.compaction?.catch(() => undefined);
    // Writes held for the thread's copy are made first (a turn for them), then committed with the rest.
    if (this.releaseWrites()) await new Promise<void>((resolve) => setImmediate(resolve));
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
      if (!this.commitTimer && !this.copy) {
        this.commitTimer = setTimeout(
          () => {
            this.commitTimer = null;
            this.commit();
          },
          this.deferredIndexes ? REBUILD_COMMIT_EVERY_MS : this.commitEveryMs,
        );
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
    if (++this.writesInBatch >= (this.deferredIndexes ? REBUILD_MAX_BATCH : this.maxBatch)) this.commit();
    return result;
  }

  /** Commits the open transaction, if any. */
  commit(): void {
    if (!this.db.open || !this.db.inTransaction) return;
    try {
      for (const [name, position] of this.pendingCheckpoints) {
        this.own.saveCheckpoint.run(name, position.toString());
        this.replayLog?.push({ checkpoint: name, position });
      }
      this.pendingCheckpoints.clear();
      this.db.exec('COMMIT');
      if (!this.copy) this.copyCommitted();
    } catch (error) {
      // Nothing since the last commit is stored, yet the projectors went on: only a restart (a replay from the
      // checkpoints, which were in the same transaction) makes the read models whole again. Health says DOWN.
      this.failed(error as Error);
    }
  }

  /**
   * Asks the thread to copy the commit just made into the file. Past `HOLD_WRITES_AT` of log, new writes wait until it
   * has (at most `holdWritesMs`): the transaction that opens then finds the whole log copied and starts it over.
   * Only while the thread keeps up (its last answer copied the whole log, within `holdWritesMs`): one that falls
   * behind (a large file, a busy disk) would hold every write for the longest wait, commit after commit; the event
   * loop's checkpoint past 256 MiB starts the log over then.
   * Not while a compaction runs (the thread is making its copy, and copies no log meanwhile), nor while the read
   * models are rebuilt from nothing (nothing is served yet: the event loop may as well checkpoint).
   */
  private copyCommitted(): void {
    const asked = ++this.checkpointsAsked;
    this.checkpointer.postMessage({ checkpoint: asked, at: performance.now() } satisfies CheckpointerMessage);
    if (this.heldWrites || this.compaction || this.closing || this.deferredIndexes) return;
    if (!this.logCopied || this.logBytes < HOLD_WRITES_AT) return;
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    // Not unref'd: a process whose only work is the held writes must not exit before they are made.
    const timer = setTimeout(() => {
      // No answer in time: the thread is behind (or gone). No more holds until it keeps up again.
      this.logCopied = false;
      this.releaseWrites();
    }, this.holdWritesMs);
    this.heldWrites = {
      until: asked,
      done,
      release: () => {
        clearTimeout(timer);
        release();
      },
    };
  }

  /** Lets held writes go on; true when some were held. */
  private releaseWrites(): boolean {
    const held = this.heldWrites;
    this.heldWrites = null;
    held?.release();
    return held !== null;
  }

  /** Resolves once new writes may go on (see `copyCommitted`); null when they may now. */
  get writesHeld(): Promise<void> | null {
    return this.heldWrites?.done ?? null;
  }

  /** Runs `write` once writes may go on: at once, as it is called, unless they are held (`copyCommitted`). */
  whenWritable<R>(write: () => R): R | Promise<R> {
    const held = this.writesHeld;
    return held ? held.then(write) : write();
  }

  private failed(error: Error): void {
    this.failure ??= error;
    this.pendingCheckpoints.clear();
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
  }

  /**
   * Deletes in the current write transaction, as every write (secure_delete zeroes the rows as they go), and notes
   * in the same transaction that a compaction is owed (a restart still owes it). A transaction of its own per
   * deletion cost an erasure of 50,000 history entries (and their trending counts) 25 s of commits.
   */
  deleteRows(sql: string, params: unknown[]): number {
    const statement = this.statement(sql);
    const changes = this.write(() => {
      const deleted = statement.run(...params).changes;
      if (deleted > 0) this.own.setScrubPending.run();
      return deleted;
    });
    if (changes > 0) {
      this.unscrubbed = true;
      this.deletions++;
    }
    return changes;
  }

  /** A write made while a compaction runs, to be replayed into its copy (see `compact`). */
  recorded(op: ReplayOp): void {
    this.replayLog?.push(op);
  }

  /** Whether a compaction records the writes now (`recorded`): a write makes what it records only then. */
  get recording(): boolean {
    return this.replayLog !== null;
  }

  /**
   * Leaves no byte of the rows deleted before this call in the files: waits for a compaction that starts after the
   * call (its copy holds none of them), shared with every erasure that asks meanwhile.
   */
  async scrub(): Promise<void> {
    if (!this.unscrubbed) return;
    this.nextCompaction ??= (this.compaction ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => {
        this.nextCompaction = null;
        if (this.closing) throw new StoreUnavailableError('read models', 'closing: the compaction did not run');
        this.compaction = this.compact().finally(() => (this.compaction = null));
        return this.compaction;
      });
    await this.nextCompaction;
  }

  /**
   * Copies the live rows into the next generation's file (checkpointer thread), replays the writes made since into
   * it in slices of a few milliseconds, then, in one step with nothing awaited, replays the last ones, switches to
   * it and records it as current; the old file is then overwritten with zeros and removed.
   */
  private async compact(): Promise<void> {
    const started = performance.now();
    const deletionsBefore = this.deletions;
    const epoch = this.schemaEpoch;
    const target = nextGeneration(this.options.file, this.file);
    await destroyFiles(target);
    this.commit();
    this.replayLog = [];
    let copy: SqliteReadModelStore | null = null;
    let longestStepMs = 0;
    try {
      await this.vacuumInto(target);
      copy = new SqliteReadModelStore(connect(target), target, this.options, true);
      const stale = () => this.closing || this.failure !== null || epoch !== this.schemaEpoch;
      for (;;) {
        if (stale()) throw new StoreUnavailableError('read models', 'the compaction was overtaken (closing, failed or schema changed)');
        const sliceStart = performance.now();
        const log = this.replayLog!;
        let done = 0;
        while (done < log.length && performance.now() - sliceStart < 5) copy.replay(log[done++]);
        log.splice(0, done);
        // Committed slice by slice: the switch then commits only its own few writes.
        copy.commit();
        longestStepMs = Math.max(longestStepMs, performance.now() - sliceStart);
        if (log.length === 0) break;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      // From here to the switch nothing is awaited: no write can come in between.
      const switchStart = performance.now();
      this.commit();
      for (const op of this.replayLog!) copy.replay(op);
      if (this.deletions === deletionsBefore) copy.write(() => copy!.own.clearScrubPending.run());
      copy.commit();
      if (copy.failure) throw unavailable(copy.failure);
      const old = { db: this.db, file: this.file, checkpointer: this.checkpointer, exited: this.checkpointerExited };
      this.replayLog = null;
      this.db = copy.db;
      this.file = target;
      this.prepareOwn();
      this.statements.clear();
      for (const collection of this.collections.values()) collection.prepareAgain();
      recordCurrent(this.options.file, target);
      this.startCheckpointer();
      if (this.deletions === deletionsBefore) this.unscrubbed = false;
      copy = null;
      longestStepMs = Math.max(longestStepMs, performance.now() - switchStart);
      old.checkpointer.postMessage('stop' satisfies CheckpointerMessage);
      await old.exited;
      old.db.close();
      await destroyFiles(old.file);
      this.logger?.info(
        { ms: Math.round(performance.now() - started), longestStepMs: Math.round(longestStepMs) },
        'read models compacted (erased rows destroyed)',
      );
    } finally {
      this.replayLog = null;
      if (copy) {
        copy.db.close();
        await destroyFiles(target);
      }
    }
  }

  /** `VACUUM INTO` in the checkpointer thread (a read of the file as it is committed now). */
  private vacuumInto(target: string): Promise<void> {
    const checkpointer = this.checkpointer;
    return new Promise((resolve, reject) => {
      const answered = (reply: CheckpointerReply) => {
        if (!('vacuumed' in reply) || reply.vacuumed !== target) return;
        checkpointer.off('message', answered);
        checkpointer.off('exit', exited);
        if (reply.error) reject(new StoreUnavailableError('read models', `compaction failed: ${reply.error}`));
        else resolve();
      };
      const exited = () => reject(new StoreUnavailableError('read models', 'the checkpointer thread stopped during a compaction'));
      checkpointer.on('message', answered);
      checkpointer.once('exit', exited);
      checkpointer.postMessage({ vacuumInto: target } satisfies CheckpointerMessage);
    });
  }

  /** Applies a write recorded during a compaction to this store (the compaction's copy). */
  replay(op: ReplayOp): void {
    if ('checkpoint' in op) this.write(() => this.pendingCheckpoints.set(op.checkpoint, op.position));
    else {
      const collection = this.collection(op.collection) as unknown as SqliteCollection<Document>;
      if ('upsert' in op) collection.upsertNow(JSON.parse(op.upsert) as VersionedDocument);
      else if ('deleteMany' in op) collection.deleteManyNow(op.deleteMany);
      else collection.updateManyNow(op.updateMany, op.set);
    }
  }
}

/** A write recorded during a compaction (by collection name: the copy has its own statements). */
type ReplayOp =
  | { checkpoint: string; position: bigint }
  | { collection: string; upsert: string }
  | { collection: string; deleteMany: Filter }
  | { collection: string; updateMany: Filter; set: Record<string, unknown> };

/**
 * While the read models are rebuilt from nothing (indexes put off, nothing served yet), transactions of up to this
 * many writes, committed this often: a commit writes each page it changed once, and the id index's pages are changed
 * all over. A rebuild of 1,130,000 events took 17.0-17.2 s with the usual 10,000 writes and 50 ms, 15.6-16.0 s with
 * 30,000-100,000 and 200-1,000 ms, 16.4 s with 1,000,000 and 5 s (the page cache spills).
 */
const REBUILD_MAX_BATCH = 50_000;
/** SQLite's page cache a file, in KiB: what RSS is held to (docs/performance.md); the operating system caches the rest. */
const CACHE_KIB = 32 * 1024;
/** The same while the read models are rebuilt from nothing (`deferredIndexes`). */
const REBUILD_CACHE_KIB = 512 * 1024;
const REBUILD_COMMIT_EVERY_MS = 500;
/**
 * The log's size past which new writes wait for the thread to copy it (`copyCommitted`). A 5,000-entry batch's commits
 * add about 7 MB each: writes are held once every few commits, each time for the copy of the last one.
 */
const HOLD_WRITES_AT = 32 * 1024 * 1024;

const TABLE_NAME = /^[A-Za-z0-9_-]+$/;

/** How many documents each collection keeps from its reads by id (`recentById`), and how long one may be: 5 MB at most. */
const RECENT_BY_ID = 10_000;
const RECENT_DOCUMENT_CHARS = 512;

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
  private readOnlyDocumentsMade?: LRUCache<string, T>;

  /** Made at the first read-only find: the cache allocates for all its entries at once (some 10 ms each, at start). */
  private get readOnlyDocuments(): LRUCache<string, T> {
    return (this.readOnlyDocumentsMade ??= new LRUCache<string, T>({ max: 50_000 }));
  }

  /**
   * The short documents last read by id, as stored (JSON text), at most `RECENT_BY_ID`: a request reads its
   * user's head (history) or document again and again, and the statement, cheap in a loop (1 µs), cost 7-19 µs of a
   * request's CPU amid the rest of its work. Every write of the collection drops what it may change (the document it
   * writes; all of them for a write by filter, an erasure's included), so nothing read here is older than the file.
   */
  private readonly recentById = new Map<string, string>();

  /** Columns added since the collection was opened: a prepared find translated before one is translated again. */
  private columnsAdded = 0;

  constructor(
    private readonly store: SqliteReadModelStore,
    private readonly name: string,
  ) {
    if (!TABLE_NAME.test(name)) throw new Error(`unsupported read-model collection name: ${JSON.stringify(name)}`);
    this.table = `"rm_${name}"`;
    store.commit();
    const db = store.database;
    // `key`: the hash of the id's owner (`idKey`): a document is found by (key, id), a user's together.
    db.exec(`CREATE TABLE IF NOT EXISTS ${this.table} (id TEXT NOT NULL, key INTEGER NOT NULL, revision REAL, doc TEXT NOT NULL)`);
    this.indexIds(name);
    for (const { name: column } of db.pragma(`table_info(${this.table})`) as Array<{ name: string }>) {
      if (column.startsWith('f_')) this.columns.add(column.slice(2));
      if (column.startsWith('k_')) this.partitionFields.add(column.slice(2));
    }
    this.statements = this.prepare();
  }

  /**
   * The id index, on (key, id), made with the table. A file from before keyed each document by its whole id's hash, on
   * an index of that alone: at the collection's first open the keys are made again, in one transaction, and the index
   * replaced (docs/performance.md).
   */
  private indexIds(name: string): void {
    const db = this.store.database;
    const exists = (index: string) => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?").get(index) !== undefined;
    const index = `rm_${name}__key_id`;
    if (exists(index)) return;
    // A table made or changed while a compaction copies the file is not so in the copy: that compaction starts again.
    this.store.schemaChanging();
    const before = `rm_${name}__key`;
    if (exists(before))
      db.transaction(() => {
        db.exec(`DROP INDEX "${before}"`);
        db.exec(`UPDATE ${this.table} SET key = udp_id_key(id)`);
      })();
    db.exec(`CREATE INDEX "${index}" ON ${this.table} (key, id)`);
  }

  /** Prepares its statements again, on the store's connection open now (after a compaction switched files). */
  prepareAgain(): void {
    this.recentById.clear();
    this.statements = this.prepare();
  }

  /** Gives `field` a column of its own, filled from the documents already stored. */
  addColumn(field: string): void {
    if (this.columns.has(field)) return;
    this.addFilledColumn(columnOf(field), columnValueSql(field));
    this.columns.add(field);
    this.columnsAdded++;
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
      byId: db.prepare(`SELECT ${rowFields(this.columns)} FROM ${this.table} WHERE key = ? AND id = ?`).raw(),
      stored: db.prepare(`SELECT rowid, revision FROM ${this.table} WHERE key = ? AND id = ?`),
      insert: db.prepare(
        `INSERT INTO ${this.table} (id, key, revision, doc${columns.map((c) => `, ${c}`).join('')}) VALUES (?, ?, ?, ?${', ?'.repeat(columns.length)})`,
      ),
      replace: db.prepare(`UPDATE ${this.table} SET revision = ?, doc = ?${columns.map((c) => `, ${c} = ?`).join('')} WHERE rowid = ?`),
    };
  }

  async get(id: string): Promise<T | null> {
    const doc = this.store.read(() => this.recentById.get(id) ?? this.readById(id));
    return doc === undefined ? null : (JSON.parse(doc) as T);
  }

  private readById(id: string): string | undefined {
    const row = this.statements.byId.get(idKey(id), id) as unknown[] | undefined;
    const doc = row && this.textOf(row);
    if (doc === undefined || doc.length > RECENT_DOCUMENT_CHARS) return doc;
    // Full, it starts again: a hot set refills at once, and dropping the oldest one by one made every read walk the
    // map's holes from its start (1.8 s of a 33 s rebuild that read each entry once).
    if (this.recentById.size >= RECENT_BY_ID) this.recentById.clear();
    this.recentById.set(id, doc);
    return doc;
  }

  async getMany(ids: readonly string[]): Promise<T[]> {
    const rows = this.store.read(() => ids.map((id) => this.statements.byId.get(idKey(id), id) as unknown[] | undefined));
    return rows.flatMap((row) => (row === undefined ? [] : [JSON.parse(this.textOf(row)) as T]));
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    const where = this.where(filter);
    // `LIMIT +?`, not `LIMIT ?`: SQLite (3.53) plans with a bare bound limit's value, so every new binding of it made the
    // statement prepare itself again on its next run (about a third of a page read's time in SQLite).
    const limit = options.limit !== undefined ? ' LIMIT +?' : '';
    const statement = this.store
      .statement(`SELECT ${rowFields(this.columns)} FROM ${this.table} WHERE ${where.sql}${orderSql(options.sort, this.columns)}${limit}`)
      .raw();
    const params = options.limit !== undefined ? [...where.params, options.limit] : where.params;
    const texts = this.store.read(() => (statement.all(...params) as unknown[][]).map((row) => this.textOf(row)));
    if (!options.readOnly) return texts.map((text) => JSON.parse(text) as T);
    return texts.map((text) => {
      let doc = this.readOnlyDocuments.get(text);
      if (doc === undefined) this.readOnlyDocuments.set(text, (doc = JSON.parse(text) as T));
      return doc;
    });
  }

  /**
   * The statement is made once, with the selected fields read from columns of their own (added now, filled from the
   * documents stored): a call binds its values and runs it, translating nothing. Made again on the connection open
   * now after a compaction switched files.
   */
  prepareFind<K extends keyof T & string>(
    filter: PreparedFilter,
    { sort, select }: PreparedFindOptions<K>,
  ): PreparedFind<{ [F in K]: T[F] | null }> {
    const fields = select.map(checkFieldName);
    const missing = fields.filter((field) => field !== '_id' && !this.columns.has(field));
    if (missing.length) {
      this.store.schemaChanging();
      for (const field of missing) this.addColumn(field);
    }
    const selected = fields.map((field) => (field === '_id' ? 'id' : columnOf(field))).join(', ');
    // Translated again when a field gets a column later: its value may then be in the column only (`storedText`).
    const translate = () => {
      const where = whereSql(filter, this.columns, this.partitionFields);
      return {
        sql: `SELECT ${selected} FROM ${this.table} WHERE ${where.sql}${orderSql(sort, this.columns)} LIMIT +?`,
        binders: where.params.map((p) =>
          p instanceof Bound ? (values: Readonly<Record<string, Scalar>>) => p.as(paramValue(p.param, values)) : () => p,
        ),
      };
    };
    let db: Database.Database | null = null;
    let statement!: Database.Statement;
    let translated = translate();
    let columnsAt = this.columnsAdded;
    const single = fields.length === 1 ? fields[0] : undefined;
    type Row = { [F in K]: T[F] | null };
    return async (values, limit = -1) => {
      if (columnsAt !== this.columnsAdded) {
        translated = translate();
        columnsAt = this.columnsAdded;
        db = null;
      }
      if (db !== this.store.database) {
        db = this.store.database;
        statement = single === undefined ? db.prepare(translated.sql).raw() : db.prepare(translated.sql).pluck();
      }
      const { binders } = translated;
      const params = binders.map((bind) => bind(values));
      params.push(limit);
      const rows = this.store.read(() => statement.all(...params) as unknown[]);
      if (single !== undefined) return rows.map((value) => ({ [single]: fromColumn(value) }) as Row);
      return rows.map((row) => {
        const result: Record<string, unknown> = {};
        for (let i = 0; i < fields.length; i++) result[fields[i]] = fromColumn((row as unknown[])[i]);
        return result as Row;
      });
    };
  }

  async count(filter: Filter): Promise<number> {
    const where = this.where(filter);
    const statement = this.store.statement(`SELECT count(*) FROM ${this.table} WHERE ${where.sql}`).pluck();
    return this.store.read(() => statement.get(...where.params) as number);
  }

  // Each write waits while the store holds writes (`whenWritable`); otherwise it is made at once, as it is called.
  async upsertIfNewer(doc: T & VersionedDocument): Promise<boolean> {
    return this.store.whenWritable(() => this.upsertNow(doc));
  }

  // In the writer's open transaction, as one write each: no round trip to save here.
  async upsertManyIfNewer(docs: ReadonlyArray<T & VersionedDocument>): Promise<boolean[]> {
    return this.store.whenWritable(() => docs.map((doc) => this.upsertNow(doc)));
  }

  upsertNow(doc: T & VersionedDocument): boolean {
    const key = idKey(doc._id);
    const { stored, insert, replace, columns, keys } = this.statements;
    this.recentById.delete(doc._id);
    return this.store.write(() => {
      const row = stored.get(key, doc._id) as { rowid: number; revision: number | null } | undefined;
      if (row && row.revision !== null && row.revision >= doc.revision) return false;
      const fields = doc as unknown as Record<string, unknown>;
      const values = [
        ...columns.map((field) => columnValue(fields[field])),
        ...keys.map((field) => partitionKey(columnValue(fields[field]))),
      ];
      const text = this.storedText(fields);
      if (row) replace.run(doc.revision, text, ...values, row.rowid);
      else insert.run(doc._id, key, doc.revision, text, ...values);
      if (this.store.recording) this.store.recorded({ collection: this.name, upsert: JSON.stringify(doc) });
      return true;
    });
  }

  async updateMany(filter: Filter, set: Partial<T>): Promise<number> {
    return this.store.whenWritable(() => this.updateManyNow(filter, set as Record<string, unknown>));
  }

  updateManyNow(filter: Filter, set: Record<string, unknown>): number {
    const entries = Object.entries(set).filter(([field]) => field !== '_id');
    for (const [field] of entries) checkFieldName(field);
    const where = this.where(filter);
    if (entries.length === 0) {
      const statement = this.store.statement(`SELECT count(*) FROM ${this.table} WHERE ${where.sql}`).pluck();
      return this.store.read(() => statement.get(...where.params) as number);
    }
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
    this.recentById.clear();
    return this.store.write(() => {
      const changes = statement.run(...params).changes;
      this.store.recorded({ collection: this.name, updateMany: filter, set });
      return changes;
    });
  }

  async deleteMany(filter: Filter): Promise<number> {
    return this.store.whenWritable(() => this.deleteManyNow(filter));
  }

  deleteManyNow(filter: Filter): number {
    const where = this.where(filter);
    this.recentById.clear();
    const deleted = this.store.deleteRows(`DELETE FROM ${this.table} WHERE ${where.sql}`, where.params);
    this.store.recorded({ collection: this.name, deleteMany: filter });
    return deleted;
  }

  private where(filter: Filter): SqlCondition {
    return whereSql(filter, this.columns, this.partitionFields);
  }

  /**
   * The document's JSON as stored: without its `_id` (the row's `id`) and without each field a column of its own holds
   * exactly (a string, a number or a boolean), so no value is stored twice (a history entry's row: 300 bytes of JSON
   * before, 60 now). `textOf` puts them back. A field whose value a column cannot hold (null, an object) stays.
   */
  private storedText(fields: Record<string, unknown>): string {
    const kept: Record<string, unknown> = {};
    for (const field in fields) {
      if (field === '_id') continue;
      const value = fields[field];
      if (this.columns.has(field) && (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')) continue;
      kept[field] = value;
    }
    return JSON.stringify(kept);
  }

  /**
   * The whole document's JSON text from a row (`rowFields`: id, doc, then the columns in `statements.columns` order):
   * `_id` first, the stored JSON's fields, then each column's value. A document stored before its fields left its JSON
   * holds them twice in the text, with the same values; JSON.parse keeps the last.
   */
  private textOf(row: unknown[]): string {
    const doc = row[1] as string;
    let text = `{"_id":${JSON.stringify(row[0])}${doc.length > 2 ? `,${doc.slice(1, -1)}` : ''}`;
    const { columns } = this.statements;
    for (let i = 0; i < columns.length; i++) {
      const value = row[i + 2];
      if (value === null || value === undefined) continue;
      text += `,${JSON.stringify(columns[i])}:${Buffer.isBuffer(value) ? (value[0] === 1 ? 'true' : 'false') : JSON.stringify(value)}`;
    }
    return `${text}}`;
  }
}

/** What a read of whole documents selects: the id, the stored JSON, then each field's column (`SqliteCollection.textOf`). */
const rowFields = (columns: ReadonlySet<string>) => ['id', 'doc', ...[...columns].map(columnOf)].join(', ');

/** A column's value as the document holds it (booleans are kept as one-byte blobs: `columnValue`). */
const fromColumn = (value: unknown) => (Buffer.isBuffer(value) ? value[0] === 1 : value);

function ownStatements(db: Database.Database) {
  return {
    loadCheckpoint: db.prepare<[string], string>('SELECT position FROM checkpoints WHERE name = ?').pluck(),
    saveCheckpoint: db.prepare<[string, string]>(
      'INSERT INTO checkpoints (name, position) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET position = excluded.position',
    ),
    scrubPending: db.prepare<[], number>("SELECT 1 FROM udp_meta WHERE name = 'scrub_pending'").pluck(),
    setScrubPending: db.prepare("INSERT OR IGNORE INTO udp_meta (name, value) VALUES ('scrub_pending', '1')"),
    clearScrubPending: db.prepare("DELETE FROM udp_meta WHERE name = 'scrub_pending'"),
  };
}

function connect(file: string): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  // Derived data: a commit need not wait for the disk (a power loss loses the last ones, and their checkpoints).
  db.pragma('synchronous = NORMAL');
  db.pragma('secure_delete = ON');
  db.pragma('busy_timeout = 5000');
  db.pragma(`cache_size = -${CACHE_KIB}`);
  // The log starts over once copied whole; a larger one (a migration's, the indexes built after a rebuild) is then cut
  // back to 64 MiB instead of keeping its size on disk.
  db.pragma('journal_size_limit = 67108864');
  db.function('udp_key', { deterministic: true }, (value: unknown) => partitionKey(value));
  db.function('udp_id_key', { deterministic: true }, (id: unknown) => idKey(String(id)));
  db.exec('CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, position TEXT NOT NULL)');
  db.exec('CREATE TABLE IF NOT EXISTS udp_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)');
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
