import Database from 'better-sqlite3';
import { closeSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { PollingSubscription } from './polling-subscription';
import { prefixSuccessor } from './prefix-range';
import { CONNECTION_PRAGMAS } from './sqlite-pragmas';
import { EVENTS_TABLE, streamKey } from './sqlite-schema';
import type { AppendOutcome, AppendRequest, WriterCommand, WriterData, WriterReply, WriterRequest } from './sqlite-writer';
import { workerEntry } from './worker-entry';
import { LastWriteFailure } from './write-failure';
import { METRICS, observeGauge, recordHistogram } from '@udp/telemetry';
import type { AppendOptions, AppendResult, EventStore, EventToAppend } from './port';
import type { BatchHandler, EventHandler, ReadStreamOptions, RecordedEvent, StreamRead, Subscription, SubscriptionOptions } from './port';
import { EPOCH_MOVED, StoreUnavailableError, WrongExpectedRevisionError } from './port';

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

interface Row {
  position: number | bigint;
  stream_id: string;
  revision: number;
  event_id: string;
  type: string;
  data: string;
  metadata: string;
  created_at: number;
}

/** The columns of `Row`, in this order, for statements that return rows as arrays. */
const RAW_COLUMNS = 'position, stream_id, revision, event_id, type, data, metadata, created_at';
type RawRow = [bigint, string, bigint, string, string, string, string, bigint];

interface PendingAppend extends AppendRequest {
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
  /** A long append that short ones went before once (`nextCommit`). */
  passedOver?: boolean;
}

/**
 * The embedded default: one SQLite file per service. WAL with synchronous=FULL means a commit is on disk
 * (fsync) before `appendToStream` resolves, so an acknowledged write survives kill -9 or power loss.
 *
 * Writes go to a worker thread that owns the write connection, so fsync never blocks the event loop; reads
 * stay here (WAL readers see every commit the writer has answered). Group commit: appends that arrive while a
 * commit is under way go together in the next one, one transaction and one fsync, each append in its own
 * savepoint with its own expected-revision check; none resolves before its commit is durable.
 */
export interface SqliteEventStoreOptions {
  /**
   * Largest size of the file, in pages (`PRAGMA max_page_count` of the writer): beyond it a commit fails as on a
   * full disk (SQLITE_FULL). Unset: only the disk limits it.
   */
  maxPageCount?: number;
  /** The app whose store this is (`udp.service` on the writer's metrics). */
  service?: string;
  /** How often commits by other processes on the same file are looked for (default 50 ms). */
  otherWritersPollMs?: number;
}

export class SqliteEventStore implements EventStore {
  private readonly db: Database.Database;
  private readonly writer: Worker;
  private readonly subscriptions = new Set<PollingSubscription>();
  private pending: PendingAppend[] = [];
  private writing: Promise<void> | null = null;
  private readonly replies = new Map<number, (reply: WriterReply) => void>();
  private nextRequestId = 1;
  private writerFailure: Error | null = null;
  private readonly stmt;
  /** The file as opened (device and inode), and a descriptor on it to read its header. */
  private readonly opened: { dev: number; ino: number; fd: number };

  /** The last commit that failed (disk full, I/O error): the store is DOWN until a write succeeds again. */
  private readonly writeFailure = new LastWriteFailure();
  /** Appends sent to the writer and not answered yet (the commit under way). */
  private committing = 0;
  private readonly metricAttributes: { 'udp.service': string };
  /** Wakes the subscriptions when another process committed to the same file (see `watchOtherWriters`). */
  private readonly othersWatch: NodeJS.Timeout;
  private readonly unobserveQueue: () => void;
  /** The writer's write epoch, as its last reply said (`writeEpoch`). */
  private epoch = 0;

  constructor(
    private readonly file: string,
    options: SqliteEventStoreOptions = {},
  ) {
    mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    for (const pragma of CONNECTION_PRAGMAS) this.db.pragma(pragma);
    const fd = openSync(file, 'r');
    const { dev, ino } = statSync(file);
    this.opened = { dev, ino, fd };
    upgradeSchema(this.db);
    this.stmt = {
      readStream: this.db.prepare<[bigint, string, number], Row>(
        `SELECT ${RAW_COLUMNS} FROM events WHERE stream_key = ? AND stream_id = ? AND revision >= ? ORDER BY revision`,
      ),
      streamRevision: this.db.prepare<[string], { revision: number }>('SELECT revision FROM streams WHERE stream_id = ?'),
      // Rows as arrays (raw): cheaper than rows as objects, which a replay of the whole log pays per event
      // (docs/performance.md, "Replay reads").
      // `LIMIT +?`: a bare `LIMIT ?` makes SQLite prepare the statement again whenever its value is bound.
      readAfter: this.db
        .prepare<[bigint, number], RawRow>(`SELECT ${RAW_COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT +?`)
        .raw(true),
      // Health reads the real tables, each by its primary key: constant time however large the store.
      lastPosition: this.db.prepare<[], { position: number | null }>('SELECT max(position) AS position FROM events'),
      // Changes when another connection (the writer thread, or another process on the same file) commits.
      dataVersion: this.db.prepare<[], number>('PRAGMA data_version').pluck(),
      // AUTOINCREMENT's counter: never lowered, not even when an erasure deletes the newest events.
      highestPosition: this.db.prepare<[], { seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'events'"),
      anyStream: this.db.prepare<[], { stream_id: string }>('SELECT stream_id FROM streams LIMIT 1'),
      // A range on the primary key: `prefix` <= id < the prefix's successor (prefix-range.ts), or no upper end.
      listStreams: this.db.prepare<[string, string], { stream_id: string }>(
        'SELECT stream_id FROM streams WHERE stream_id >= ? AND stream_id < ?',
      ),
      listStreamsFrom: this.db.prepare<[string], { stream_id: string }>('SELECT stream_id FROM streams WHERE stream_id >= ?'),
    };
    this.stmt.readAfter.safeIntegers(true);
    const workerData: WriterData = { file, maxPageCount: options.maxPageCount };
    this.writer = new Worker(workerEntry(__dirname, 'sqlite-writer'), { workerData });
    // The writer keeps the process alive only while it is asked something: a store nobody closed (a test that
    // failed before its close) does not hold the process open, and a script awaiting an append still waits for it.
    this.writer.unref();
    this.writer.on('message', (reply: WriterReply) => {
      if (reply.epoch !== undefined) this.epoch = reply.epoch;
      const answer = this.replies.get(reply.id);
      this.replies.delete(reply.id);
      if (this.replies.size === 0) this.writer.unref();
      answer?.(reply);
    });
    this.othersWatch = this.watchOtherWriters(options.otherWritersPollMs ?? 50);
    this.metricAttributes = { 'udp.service': options.service ?? 'unknown' };
    this.unobserveQueue = observeGauge(METRICS.sqliteWriterQueue, (observe) =>
      observe(this.pending.length + this.committing, this.metricAttributes),
    );
    this.writer.on('error', (error) => this.failWriter(error));
    this.writer.on('exit', (code) => this.failWriter(new Error(`SQLite writer stopped (exit code ${code})`)));
  }

  /**
   * As the writer last said. A commit of another process since then is not counted yet: an append with this epoch
   * is refused by the writer, which sees it in the append's transaction.
   */
  writeEpoch(): number {
    return this.epoch;
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StreamRead> {
    // The writer thread may commit between these two reads. Reading the revision first makes the events a
    // superset of it, so the larger of the two is the revision these events end at; a commit after that
    // makes the caller's append fail its revision check, as it should.
    const revision = this.stmt.streamRevision.get(streamId)?.revision ?? -1;
    const events = this.stmt.readStream.all(streamKey(streamId), streamId, options.fromRevision ?? 0).map(toRecorded);
    return { revision: Math.max(revision, events.length ? events[events.length - 1].revision : -1), events };
  }

  appendToStream(streamId: string, events: EventToAppend[], options: AppendOptions): Promise<AppendResult> {
    if (this.writerFailure) return Promise.reject(new StoreUnavailableError('event store', this.writerFailure.message));
    const { expectedRevision, unchangedSinceEpoch } = options;
    return new Promise((resolve, reject) => {
      const texts = events.map((e) => ({
        id: e.id,
        type: e.type,
        data: JSON.stringify(e.data),
        metadata: JSON.stringify(e.metadata ?? {}),
      }));
      this.pending.push({ streamId, events: texts, expectedRevision, unchangedSinceEpoch, resolve, reject });
      if (!this.writing) this.writing = this.commitPending();
    });
  }

  /** Sends what is pending as one batch, then whatever arrived meanwhile, until nothing is left. */
  private async commitPending(): Promise<void> {
    // Yield first: the caller assigns `this.writing` from our promise, and a batch refused without any await
    // would otherwise clear it before that assignment, leaving it set for ever.
    await Promise.resolve();
    while (this.pending.length > 0) {
      const [batch, rest] = nextCommit(this.pending);
      this.pending = rest;
      // A commit into a file that is no longer the one at our path (removed, replaced, overwritten) would be
      // acknowledged and then lost: refuse the batch instead.
      const problem = this.fileProblem();
      if (problem) {
        for (const append of batch) append.reject(new StoreUnavailableError('event store', problem));
        continue;
      }
      const sent = performance.now();
      this.committing = batch.length;
      const reply = await this.ask({
        type: 'append',
        batch: batch.map(({ streamId, events, expectedRevision, unchangedSinceEpoch }) => ({
          streamId,
          events,
          expectedRevision,
          ...(unchangedSinceEpoch !== undefined && { unchangedSinceEpoch }),
        })),
      });
      this.committing = 0;
      recordHistogram(METRICS.sqliteCommitDuration, (performance.now() - sent) / 1000, this.metricAttributes);
      // The events this commit stored, handed to the subscriptions so they need not read them back; one that
      // is not exactly at `before` (busy with earlier events, e.g. a projection retrying while its read-model
      // store is down) reads from the store instead. A failed commit stored nothing: nothing is handed over.
      if (reply.failure) this.writeFailure.failed(reply.failure);
      else this.writeFailure.succeeded();
      const committed = reply.outcomes && reply.before !== undefined && !reply.failure ? committedEvents(batch, reply.outcomes) : [];
      for (const s of this.subscriptions) {
        if (committed.length > 0) s.offer(committed, reply.before!);
        else s.notify();
      }
      batch.forEach((append, i) => {
        const outcome = reply.outcomes?.[i];
        if (!outcome) append.reject(new StoreUnavailableError('event store', `commit failed: ${reply.failure ?? 'no answer'}`));
        else if (outcome.ok)
          append.resolve({
            nextRevision: outcome.nextRevision,
            position: outcome.position,
            ...(outcome.stored && { stored: outcome.stored }),
            ...(reply.epoch !== undefined && { epoch: reply.epoch }),
          });
        else if (outcome.wrongRevision)
          append.reject(
            new WrongExpectedRevisionError(
              append.streamId,
              outcome.wrongRevision.expected,
              outcome.wrongRevision.actual,
              outcome.wrongRevision.epochMoved ? EPOCH_MOVED : undefined,
            ),
          );
        else append.reject(new Error(outcome.message));
      });
    }
    this.writing = null;
  }

  private ask(command: WriterCommand): Promise<WriterReply> {
    if (this.writerFailure) return Promise.resolve({ id: 0, failure: this.writerFailure.message });
    const id = this.nextRequestId++;
    return new Promise((resolve) => {
      this.replies.set(id, resolve);
      this.writer.ref();
      this.writer.postMessage({ ...command, id } satisfies WriterRequest);
    });
  }

  private failWriter(error: Error): void {
    this.writerFailure ??= error;
    for (const [id, answer] of this.replies) answer({ id, failure: error.message });
    this.replies.clear();
  }

  async deleteStream(streamId: string): Promise<void> {
    const problem = this.fileProblem();
    if (problem) throw new StoreUnavailableError('event store', problem);
    const reply = await this.ask({ type: 'delete', streamId });
    if (reply.failure) this.writeFailure.failed(reply.failure);
    else this.writeFailure.succeeded();
    if (reply.failure) throw new StoreUnavailableError('event store', `delete failed: ${reply.failure}`);
  }

  async listStreams(prefix: string): Promise<string[]> {
    const successor = prefixSuccessor(prefix);
    const rows = successor === undefined ? this.stmt.listStreamsFrom.all(prefix) : this.stmt.listStreams.all(prefix, successor);
    // The range is exact for well-formed names; the check keeps it exact for any other.
    return rows.map((r) => r.stream_id).filter((id) => id.startsWith(prefix));
  }

  subscribeBatches(options: SubscriptionOptions, handler: BatchHandler): Subscription {
    return this.subscribe(options, handler);
  }

  subscribe(options: SubscriptionOptions, handler: EventHandler | BatchHandler): Subscription {
    const sub = new PollingSubscription(
      options,
      (after, limit) => this.stmt.readAfter.all(after ?? 0n, limit).map(rawToRecorded),
      handler,
      () => this.subscriptions.delete(sub),
      this.backlogQuery(options.streamPrefixes),
    );
    this.subscriptions.add(sub);
    return sub;
  }

  /**
   * A subscription's backlog: its streams' events among the `limit` stored after its position (the primary key's
   * range, so the work is bounded by `limit` whatever the store's size), and when the first of them was stored.
   */
  private backlogQuery(prefixes: string[]) {
    // substr() counts characters (code points), not the UTF-16 code units of `length`.
    const matches = prefixes.map(() => 'substr(stream_id, 1, ?) = ?').join(' OR ') || '0';
    const query = this.db.prepare<unknown[], { events: number; oldest: number | null }>(
      `SELECT count(*) AS events, min(created_at) AS oldest FROM (SELECT stream_id, created_at FROM events WHERE position > ? ORDER BY position LIMIT +?) WHERE ${matches}`,
    );
    const prefixParams = prefixes.flatMap((p) => [[...p].length, p]);
    return (after: bigint | undefined, _prefixes: string[], limit: number) => {
      const row = query.get(after ?? 0n, limit, ...prefixParams)!;
      return { events: row.events, oldestCreatedAt: row.oldest ?? undefined };
    };
  }

  /**
   * Several processes may share one file (replicas on one volume, the fault suites): a commit by another process
   * notifies nobody here, so every `pollMs` the subscriptions are woken when the file's data version moved. The
   * check is one pragma; our own commits move it too, and then the wake-up reads nothing new.
   */
  private watchOtherWriters(pollMs: number): NodeJS.Timeout {
    let seen = this.stmt.dataVersion.get()!;
    const timer = setInterval(() => {
      if (!this.db.open) return;
      try {
        const version = this.stmt.dataVersion.get()!;
        if (version !== seen) for (const s of this.subscriptions) s.notify();
        seen = version;
      } catch {
        // The file is gone or unreadable: ping reports it.
      }
    }, pollMs);
    timer.unref();
    return timer;
  }

  /** The highest position this log ever gave (0 when empty): saved read models are never trusted beyond it (port.ts). */
  highestPosition(): bigint {
    return BigInt(this.stmt.highestPosition.get()?.seq ?? 0);
  }

  /**
   * Up when a write could be made durable now: the writer runs, the file is still ours, its tables read, and the
   * last commit did not fail; after a failed one (disk full), a probe write must succeed first.
   */
  async ping(): Promise<boolean> {
    if (this.writerFailure || this.fileProblem()) return false;
    if (this.writeFailure.current() !== null) {
      const reply = await this.ask({ type: 'probe' });
      if (reply.failure) return false;
      this.writeFailure.succeeded();
    }
    try {
      this.stmt.lastPosition.get();
      this.stmt.anyStream.get();
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Why the file at our path is not the database we opened, or null. SQLite keeps writing into an unlinked
   * or replaced file without complaint (DATA_DIR removed while running), and an overwritten one keeps
   * answering from its write-ahead log for a while, so neither shows in a query.
   */
  private fileProblem(): string | null {
    let now;
    try {
      now = statSync(this.file);
    } catch {
      return `${this.file} is gone (removed while the store was open)`;
    }
    if (now.dev !== this.opened.dev || now.ino !== this.opened.ino) return `${this.file} was replaced by another file`;
    const header = Buffer.alloc(SQLITE_HEADER.length);
    try {
      readSync(this.opened.fd, header, 0, header.length, 0);
    } catch {
      return `${this.file} cannot be read`;
    }
    if (!header.equals(SQLITE_HEADER)) return `${this.file} was overwritten (no SQLite header)`;
    return null;
  }

  async close(): Promise<void> {
    clearInterval(this.othersWatch);
    this.unobserveQueue();
    for (const s of [...this.subscriptions]) await s.stop();
    // Appends already accepted are committed (and answered) before the writer stops.
    while (this.writing) await this.writing;
    this.writer.removeAllListeners('exit');
    await this.writer.terminate();
    if (this.db.open) {
      this.db.close();
      closeSync(this.opened.fd);
    }
  }
}

/**
 * Events from which an append is long: it holds the writer 4-8 ms or more, and is not committed together with short
 * ones (`nextCommit`). Shorter batches (a sync of a few hundred entries) still share commits, one fsync for many.
 */
const LONG_APPEND_EVENTS = 1000;

/**
 * The pending appends (in the order asked) the next commit takes, and those left for the commits after it: all of them
 * (group commit), unless some are long (a 5,000-entry batch holds the writer 30-50 ms). Then the short ones to streams
 * with no long append pending go first, in a commit of their own, so that a single write waits for at most the one
 * batch already being committed, not also for one it would share its commit with. A long append is passed over once
 * only: the next commit takes every append up to it (in their order), however many short ones keep arriving, so a batch
 * never waits behind a stream of writes. One stream's appends keep their order.
 */
export function nextCommit<A extends Pick<AppendRequest, 'streamId' | 'events'> & { passedOver?: boolean }>(pending: A[]): [A[], A[]] {
  const isLong = (append: A) => append.events.length >= LONG_APPEND_EVENTS;
  const firstLong = pending.findIndex(isLong);
  if (firstLong < 0) return [pending, []];
  if (!pending[firstLong].passedOver) {
    const longStreams = new Set(pending.filter(isLong).map((append) => append.streamId));
    const [short, rest] = [[] as A[], [] as A[]];
    for (const append of pending) (longStreams.has(append.streamId) ? rest : short).push(append);
    if (short.length > 0) {
      for (const append of rest) if (isLong(append)) append.passedOver = true;
      return [short, rest];
    }
  }
  return [pending.slice(0, firstLong + 1), pending.slice(firstLong + 1)];
}

/** The events of `batch` its commit stored, as a read would give them back (JSON in and out), in position order. */
function committedEvents(batch: AppendRequest[], outcomes: AppendOutcome[]): RecordedEvent[] {
  return batch.flatMap((append, i) => {
    const outcome = outcomes[i];
    if (!outcome?.ok || !outcome.stored) return [];
    const { createdAt, positions } = outcome.stored;
    const first = outcome.nextRevision - append.events.length + 1;
    return append.events.map((e, k) => ({
      id: e.id,
      streamId: append.streamId,
      revision: first + k,
      position: positions[k],
      type: e.type,
      // Parsed from the text stored: the subscribers get the events as a read would give them, shared with no caller.
      data: JSON.parse(e.data) as Record<string, unknown>,
      metadata: JSON.parse(e.metadata) as Record<string, unknown>,
      createdAt,
    }));
  });
}

function toRecorded(row: Row): RecordedEvent {
  return {
    id: row.event_id,
    streamId: row.stream_id,
    revision: Number(row.revision),
    position: BigInt(row.position),
    type: row.type,
    data: JSON.parse(row.data),
    metadata: JSON.parse(row.metadata),
    createdAt: Number(row.created_at),
  };
}

function rawToRecorded([position, streamId, revision, id, type, data, metadata, createdAt]: RawRow): RecordedEvent {
  return {
    id,
    streamId,
    revision: Number(revision),
    position,
    type,
    data: JSON.parse(data),
    metadata: JSON.parse(metadata),
    createdAt: Number(createdAt),
  };
}

/**
 * Creates the tables, or upgrades a file from before `stream_key` (whose events' unique indexes held the stream ids):
 * the events are copied into the new table in one transaction, the old one dropped (its pages zeroed, secure_delete),
 * once per file. AUTOINCREMENT's counter is kept: a position is never given twice. A file from before 2026-11-28 loses
 * its index of event ids (the writer finds a retried append by revision, sqlite-writer.ts `alreadyStored`).
 */
function upgradeSchema(db: Database.Database): void {
  const events = db.prepare<[], string>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'events'").pluck().get();
  if (events === undefined || events.includes('stream_key')) {
    db.exec(EVENTS_TABLE);
    db.exec('DROP INDEX IF EXISTS events_by_event_id');
    return;
  }
  db.function('udp_stream_key', { deterministic: true, safeIntegers: true }, (id: unknown) => streamKey(String(id)));
  db.pragma('secure_delete = ON');
  db.transaction(() => {
    const seq = db.prepare<[], number>("SELECT seq FROM sqlite_sequence WHERE name = 'events'").pluck().get() ?? 0;
    db.exec('ALTER TABLE events RENAME TO events_before_stream_key');
    db.exec(EVENTS_TABLE);
    db.exec(
      `INSERT INTO events (position, stream_id, revision, event_id, type, data, metadata, created_at, stream_key)
       SELECT position, stream_id, revision, event_id, type, data, metadata, created_at, udp_stream_key(stream_id)
       FROM events_before_stream_key ORDER BY position`,
    );
    db.exec('DROP TABLE events_before_stream_key');
    db.prepare("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'events'").run(seq);
  }).immediate();
  db.pragma('secure_delete = OFF');
  db.pragma('wal_checkpoint(TRUNCATE)');
}
