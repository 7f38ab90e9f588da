// Writes large histories straight into history-svc's SQLite event file (not through HTTP), for the bench:
// `node dist/bench/seed.js <file> <users> <entries per user> <long-history user> <events of that user> [<readers> <entries per reader>]`.
// Users are `seed-user-<n>`; readers (optional) are `bench-reader-<n>`. Events are those the service writes (owner
// recorded, rows as its writer thread stores them), so the service folds and projects them as its own.
//
// Batch inserts: the store opens the file first (it creates the tables and WAL mode as the service has them), then
// one connection of our own inserts the rows in large transactions with `synchronous = OFF` (the file is closed and
// checkpointed before any service opens it), which is what makes 10,000,000 events take minutes, not an hour.
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { SqliteEventStore, streamKey } from '@udp/eventstore';
import { historyStreamId } from '../apps/history-svc/src/domain/aggregate';

const [file, users, perUser, longUser, longEvents, readers = '0', perReader = '0'] = process.argv.slice(2);
const T0 = 1_600_000_000_000;
/** Events per transaction. */
const BATCH = 50_000;

async function seed(): Promise<void> {
  const started = performance.now();
  // The schema as the service makes it; nothing is appended through it.
  await new SqliteEventStore(file).close();
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144'); // 256 MiB of page cache: the two stream indexes stay in memory while they grow
  const insert = db.prepare(
    'INSERT INTO events (stream_id, stream_key, revision, event_id, type, data, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const setRevision = db.prepare(
    'INSERT INTO streams (stream_id, revision) VALUES (?, ?) ON CONFLICT(stream_id) DO UPDATE SET revision = excluded.revision',
  );
  const now = Date.now();
  let events = 0;
  /** Appends `count` entries to `userId`'s history from revision `from`: item `<prefix><itemOf(n)>`, date T0 + n s. */
  const history = (userId: string, prefix: string, from: number, count: number, itemOf: (n: number) => number) => {
    const streamId = historyStreamId(userId);
    const key = streamKey(streamId);
    const metadata = JSON.stringify({ owner: { userId } });
    for (let n = from; n < from + count; n++) {
      const item = itemOf(n);
      const date = T0 + n * 1000;
      const data = { itemId: `${prefix}${item}`, id: item + 1, date, deleted: false, deviceId: 'seed', lastPlaybackPosition: date % 3600 };
      insert.run(streamId, key, n, randomUUID(), 'HistoryItemRecorded', JSON.stringify(data), metadata, now);
    }
    setRevision.run(streamId, from + count - 1);
    events += count;
  };
  const inTransactions = (count: number, perItem: number, write: (i: number) => void) => {
    const per = Math.max(1, Math.floor(BATCH / Math.max(1, perItem)));
    for (let i = 0; i < count; i += per) {
      db.transaction(() => {
        for (let k = i; k < Math.min(count, i + per); k++) write(k);
      })();
    }
  };
  inTransactions(Number(users), Number(perUser), (u) => history(`seed-user-${u}`, 'urn:seed:', 0, Number(perUser), (i) => i));
  // Readers: items of their own, so no two readers' pages are the same bytes.
  inTransactions(Number(readers), Number(perReader), (r) =>
    history(`bench-reader-${r}`, `urn:reader-${r}:`, 0, Number(perReader), (i) => i),
  );
  // One long history: replays of 10,000 items, so each item's entry is recorded again and again.
  const distinct = 10_000;
  for (let from = 0; from < Number(longEvents); from += BATCH) {
    db.transaction(() => history(longUser, 'urn:long:', from, Math.min(BATCH, Number(longEvents) - from), (n) => n % distinct))();
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  process.stdout.write(`${JSON.stringify({ seconds: (performance.now() - started) / 1000, events })}\n`);
}

seed().catch((error) => {
  process.stderr.write(`seed failed: ${error.stack ?? error}\n`);
  process.exitCode = 1;
});
