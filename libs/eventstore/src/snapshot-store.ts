import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * A folded state saved for a stream, so a write reads only the events after it. Snapshots live beside the event
 * log, never in it: the log is never rewritten, and losing every snapshot only makes the next writes slower.
 */
export interface StoredSnapshot {
  /** The aggregate's snapshot format version; a snapshot of another version is ignored. */
  version: number;
  /** Revision of the stream's last event folded into `state`. */
  revision: number;
  /** Id of that event: a stream deleted and written again is told apart by it. */
  lastEventId: string;
  /** The state, as JSON text. */
  state: string;
}

export interface SnapshotStore {
  read(streamId: string): Promise<StoredSnapshot | undefined>;
  write(streamId: string, snapshot: StoredSnapshot): Promise<void>;
  /** Removes the stream's snapshot (the erasure of a user's streams removes theirs too). */
  delete(streamId: string): Promise<void>;
  close(): Promise<void>;
}

export class MemorySnapshotStore implements SnapshotStore {
  private readonly snapshots = new Map<string, StoredSnapshot>();
  async read(streamId: string) {
    return this.snapshots.get(streamId);
  }
  async write(streamId: string, snapshot: StoredSnapshot) {
    this.snapshots.set(streamId, snapshot);
  }
  async delete(streamId: string) {
    this.snapshots.delete(streamId);
  }
  async close() {}
}

/** The embedded mode's snapshots: a SQLite file of their own beside the service's event file. */
export class SqliteSnapshotStore implements SnapshotStore {
  private readonly db: Database.Database;
  private readonly stmt;

  constructor(file: string) {
    mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    // A lost snapshot costs only a longer read, so no fsync per snapshot.
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    // An erased user's snapshot must leave no bytes behind in the file (see SqliteEventStore).
    this.db.pragma('secure_delete = ON');
    this.db.exec(`CREATE TABLE IF NOT EXISTS snapshots (
      stream_id TEXT PRIMARY KEY, version INTEGER NOT NULL, revision INTEGER NOT NULL, last_event_id TEXT NOT NULL, state TEXT NOT NULL)`);
    this.stmt = {
      read: this.db.prepare<[string], { version: number; revision: number; last_event_id: string; state: string }>(
        'SELECT version, revision, last_event_id, state FROM snapshots WHERE stream_id = ?',
      ),
      write: this.db.prepare(
        'INSERT OR REPLACE INTO snapshots (stream_id, version, revision, last_event_id, state) VALUES (?, ?, ?, ?, ?)',
      ),
      delete: this.db.prepare('DELETE FROM snapshots WHERE stream_id = ?'),
    };
  }

  async read(streamId: string): Promise<StoredSnapshot | undefined> {
    const row = this.stmt.read.get(streamId);
    return row && { version: row.version, revision: row.revision, lastEventId: row.last_event_id, state: row.state };
  }

  async write(streamId: string, s: StoredSnapshot): Promise<void> {
    this.stmt.write.run(streamId, s.version, s.revision, s.lastEventId, s.state);
  }

  async delete(streamId: string): Promise<void> {
    if (this.stmt.delete.run(streamId).changes === 0) return;
    // The primary key's interior pages may keep a copy of the deleted key as a divider: rebuilt, it has none.
    this.db.exec('REINDEX');
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
