import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { PollingSubscription } from './polling-subscription';
import {
  type AppendResult, type EventHandler, type EventStore, type EventToAppend, type ExpectedRevision,
  type RecordedEvent, type StreamRead, type Subscription, type SubscriptionOptions,
  WrongExpectedRevisionError, revisionMatches,
} from './port';

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

interface PendingAppend {
  streamId: string;
  events: EventToAppend[];
  expectedRevision: ExpectedRevision;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

/**
 * The embedded default: one SQLite file per service. WAL with synchronous=FULL means a commit is on disk
 * (fsync) before `appendToStream` resolves, so an acknowledged write survives kill -9 or power loss.
 *
 * Group commit: appends that arrive in the same turn of the event loop are committed in one transaction with
 * one fsync. Each runs in its own savepoint with its own expected-revision check, so one refused append does
 * not affect the others, and none resolves before the shared commit is durable.
 */
export class SqliteEventStore implements EventStore {
  private readonly db: Database.Database;
  private readonly subscriptions = new Set<PollingSubscription>();
  private pending: PendingAppend[] = [];
  private flushScheduled = false;
  private readonly stmt;

  constructor(file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS events (
        position INTEGER PRIMARY KEY AUTOINCREMENT,
        stream_id TEXT NOT NULL,
        revision INTEGER NOT NULL,
        event_id TEXT NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        metadata TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        UNIQUE (stream_id, revision),
        UNIQUE (stream_id, event_id)
      );
      CREATE TABLE IF NOT EXISTS streams (stream_id TEXT PRIMARY KEY, revision INTEGER NOT NULL);
    `);
    this.stmt = {
      readStream: this.db.prepare<[string], Row>('SELECT * FROM events WHERE stream_id = ? ORDER BY revision'),
      streamRevision: this.db.prepare<[string], { revision: number }>('SELECT revision FROM streams WHERE stream_id = ?'),
      findEvent: this.db.prepare<[string, string], Row>('SELECT * FROM events WHERE stream_id = ? AND event_id = ?'),
      insert: this.db.prepare(
        'INSERT INTO events (stream_id, revision, event_id, type, data, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      setRevision: this.db.prepare(
        'INSERT INTO streams (stream_id, revision) VALUES (?, ?) ON CONFLICT(stream_id) DO UPDATE SET revision = excluded.revision',
      ),
      readAfter: this.db.prepare<[bigint, number], Row>('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?'),
      deleteEvents: this.db.prepare('DELETE FROM events WHERE stream_id = ?'),
      deleteStream: this.db.prepare('DELETE FROM streams WHERE stream_id = ?'),
    };
    this.stmt.readAfter.safeIntegers(true);
  }

  async readStream(streamId: string): Promise<StreamRead> {
    const events = this.stmt.readStream.all(streamId).map(toRecorded);
    return { revision: events.length ? events[events.length - 1].revision : -1, events };
  }

  appendToStream(streamId: string, events: EventToAppend[], options: { expectedRevision: ExpectedRevision }): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      this.pending.push({ streamId, events, expectedRevision: options.expectedRevision, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    const batch = this.pending;
    this.pending = [];
    const outcomes: Array<{ ok: true; result: AppendResult } | { ok: false; error: unknown }> = [];
    try {
      this.db.transaction(() => {
        for (const append of batch) {
          // A nested transaction is a savepoint: a refused append rolls back alone.
          try {
            outcomes.push({ ok: true, result: this.db.transaction(() => this.appendOne(append))() });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      }).immediate();
    } catch (error) {
      // The commit itself failed: nothing of the batch is stored, so nothing is acknowledged.
      for (const append of batch) append.reject(error);
      return;
    }
    batch.forEach((append, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) append.resolve(outcome.result);
      else append.reject(outcome.error);
    });
    for (const s of this.subscriptions) s.notify();
  }

  private appendOne({ streamId, events, expectedRevision }: PendingAppend): AppendResult {
    const current = this.stmt.streamRevision.get(streamId)?.revision ?? -1;
    const already = events.map((e) => this.stmt.findEvent.get(streamId, e.id));
    if (events.length > 0 && already.every(Boolean)) {
      return { nextRevision: current, position: BigInt(already[already.length - 1]!.position) };
    }
    if (!revisionMatches(expectedRevision, current)) {
      throw new WrongExpectedRevisionError(streamId, expectedRevision, current);
    }
    let revision = current;
    let position = 0n;
    const now = Date.now();
    for (const e of events) {
      revision += 1;
      const info = this.stmt.insert.run(streamId, revision, e.id, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata ?? {}), now);
      position = BigInt(info.lastInsertRowid);
    }
    this.stmt.setRevision.run(streamId, revision);
    return { nextRevision: revision, position };
  }

  async deleteStream(streamId: string): Promise<void> {
    this.db.transaction(() => {
      this.stmt.deleteEvents.run(streamId);
      this.stmt.deleteStream.run(streamId);
    }).immediate();
  }

  subscribe(options: SubscriptionOptions, handler: EventHandler): Subscription {
    const sub = new PollingSubscription(
      options,
      (after, limit) => this.stmt.readAfter.all(after ?? 0n, limit).map(toRecorded),
      handler,
      () => this.subscriptions.delete(sub),
    );
    this.subscriptions.add(sub);
    return sub;
  }

  async ping(): Promise<boolean> {
    try {
      this.db.prepare('SELECT 1').get();
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    for (const s of [...this.subscriptions]) await s.stop();
    // Appends already accepted are committed (and answered) before the file closes.
    if (this.pending.length && this.db.open) this.flush();
    if (this.db.open) this.db.close();
  }
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
