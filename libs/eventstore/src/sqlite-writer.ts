/**
 * The SQLite write side: the entry of the worker thread that owns the write connection (started by sqlite.ts),
 * so that the fsync of each commit never blocks the event loop that serves requests.
 *
 * Loaded by file, never imported for its code (sqlite.ts imports only its types). In dist/ it is its own bundle
 * (tools/build.mjs); from the sources (jest, whose transform does not reach worker threads) Node runs this file as
 * it is, stripping its types. Hence CommonJS `require` with `.ts` in relative paths, and erasable TypeScript only
 * (no parameter properties, enums or namespaces).
 */

export interface AppendRequest {
  streamId: string;
  /**
   * `data` and `metadata` as JSON text, made on the event loop: a string crosses to this thread as a copy of its
   * bytes, where an object is rebuilt field by field and then turned into text here (a 5,000-event batch held this
   * thread, and every other user's append behind it, about 10 ms longer so).
   */
  events: Array<{ id: string; type: string; data: string; metadata: string }>;
  expectedRevision: number | 'no_stream' | 'any';
  /** Refused (`epochMoved`) unless the write epoch is still this one (port.ts, `writeEpoch`). */
  unchangedSinceEpoch?: number;
}

export type AppendOutcome =
  | {
      ok: true;
      nextRevision: number;
      position: bigint;
      /** Set when this append stored its events now (not a retry of one already stored): at `createdAt`, at `positions`. */
      stored?: { createdAt: number; positions: bigint[] };
    }
  | {
      ok: false;
      /** `epochMoved`: the revision matched, the write epoch did not. */
      wrongRevision?: { expected: number | 'no_stream' | 'any'; actual: number; epochMoved?: boolean };
      message: string;
    };

export type WriterCommand = { type: 'append'; batch: AppendRequest[] } | { type: 'delete'; streamId: string } | { type: 'probe' };
export type WriterRequest = WriterCommand & { id: number };
/**
 * `before`: the store's last position when the append batch began (0 when empty); every event it stored is after it.
 * `epoch`: the write epoch as the writer last saw it (in the append batch's transaction, for an append).
 */
export type WriterReply = { id: number; outcomes?: AppendOutcome[]; before?: bigint; failure?: string; epoch?: number };

export interface WriterData {
  file: string;
  /** `PRAGMA max_page_count` of the writer: the file may not grow beyond it (SQLITE_FULL, as on a full disk). */
  maxPageCount?: number;
}

const { parentPort, workerData } = require('node:worker_threads') as typeof import('node:worker_threads');
const Database = require('better-sqlite3') as typeof import('better-sqlite3');
const { CONNECTION_PRAGMAS } = require('./sqlite-pragmas.ts') as typeof import('./sqlite-pragmas');
const { STREAMS_ID_INDEX, streamKey } = require('./sqlite-schema.ts') as typeof import('./sqlite-schema');

const { file, maxPageCount } = workerData as WriterData;
const db = new Database(file);
for (const pragma of CONNECTION_PRAGMAS) db.pragma(pragma);
// Erasure: deleted rows are overwritten with zeros in the file, not just unlinked (see 'delete' below).
db.pragma('secure_delete = ON');
if (maxPageCount !== undefined) db.pragma(`max_page_count = ${Math.floor(maxPageCount)}`);
const streamRevision = db.prepare<[string], { revision: number }>('SELECT revision FROM streams WHERE stream_id = ?');
const eventAt = db.prepare<[bigint, number, string], { position: number; event_id: string }>(
  'SELECT position, event_id FROM events WHERE stream_key = ? AND revision = ? AND stream_id = ?',
);
const insert = db.prepare(
  'INSERT INTO events (stream_id, stream_key, revision, event_id, type, data, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
);
const setRevision = db.prepare(
  'INSERT INTO streams (stream_id, revision) VALUES (?, ?) ON CONFLICT(stream_id) DO UPDATE SET revision = excluded.revision',
);
const lastPosition = db.prepare<[], { position: bigint | null }>('SELECT max(position) AS position FROM events').safeIntegers(true);
// Erasure: each row's content is first overwritten in place with zeros of the same size (a blob as long as the
// text, so SQLite writes over the cell where it is), then the row is deleted. Deleting alone lets SQLite rebalance the
// pages as they empty, copying the rows still to be deleted into pages whose free space then keeps the old copies (a
// kill -9 test found one of an erased user's events so): zeroed first, only zeros are ever copied. A blob never
// equals a stream id (text), so a zeroed row matches no stream.
const zeroed = (column: string) => `${column} = zeroblob(length(CAST(${column} AS BLOB)))`;
const slicePositions = db
  .prepare<[bigint, string, number], number>(
    'SELECT position FROM events WHERE stream_key = ? AND stream_id = ? ORDER BY revision LIMIT +?',
  )
  .pluck();
const blankEvents = db.prepare(
  `UPDATE events SET ${['stream_id', 'data', 'metadata'].map(zeroed).join(', ')} WHERE position IN (SELECT value FROM json_each(?))`,
);
const deleteEvents = db.prepare('DELETE FROM events WHERE position IN (SELECT value FROM json_each(?))');
const blankStream = db.prepare<[string], number>(`UPDATE streams SET ${zeroed('stream_id')} WHERE stream_id = ? RETURNING rowid`).pluck();
const deleteStreamRow = db.prepare('DELETE FROM streams WHERE rowid = ?');

// The write epoch (port.ts, `writeEpoch`): moved by a deletion, and by another connection's commit (another process
// on the file). `data_version` changes with each commit of another connection; read in an append batch's write
// transaction, no commit can come between the reading and the batch's appends.
const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
let epoch = 0;
let seenDataVersion: number | undefined;
function observeOtherWriters(): void {
  const version = dataVersion.get() as number;
  if (seenDataVersion !== undefined && version !== seenDataVersion) epoch++;
  seenDataVersion = version;
}

/** Zeroes, then deletes, up to `limit` of the stream's oldest events; how many it deleted. */
function deleteEventsSlice(key: bigint, streamId: string, limit: number): number {
  const positions = slicePositions.all(key, streamId, limit);
  if (positions.length === 0) return 0;
  const list = JSON.stringify(positions);
  blankEvents.run(list);
  deleteEvents.run(list);
  return positions.length;
}

/** The storage failed (full, I/O, read-only...), not the append: the whole batch fails, and nothing is stored. */
const storageFailure = (error: unknown) =>
  /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN|CORRUPT|NOTADB)/.test(String((error as { code?: unknown }).code ?? ''));

class WrongRevision extends Error {
  readonly expected: AppendRequest['expectedRevision'];
  readonly actual: number;
  readonly epochMoved: boolean;
  constructor(expected: AppendRequest['expectedRevision'], actual: number, epochMoved = false) {
    super(`expected revision ${String(expected)}, actual ${actual}${epochMoved ? ', write epoch moved' : ''}`);
    this.expected = expected;
    this.actual = actual;
    this.epochMoved = epochMoved;
  }
}

/**
 * A retried append that already succeeded (the same event ids again): the position of its last event, else null.
 * Looked for where the append put its events: after the revision it expected (`any`: the stream's last events),
 * so an append to a stream at the revision it expects looks up nothing. No index of event ids: kept for this alone,
 * it was a third of every event's writes, and the one whose keys (random ids) fell all over the file.
 */
function alreadyStored(
  key: bigint,
  streamId: string,
  events: AppendRequest['events'],
  expectedRevision: AppendRequest['expectedRevision'],
  current: number,
): bigint | null {
  const first = expectedRevision === 'no_stream' ? 0 : expectedRevision === 'any' ? current - events.length + 1 : expectedRevision + 1;
  if (events.length === 0 || first < 0 || first + events.length - 1 > current) return null;
  let position: bigint | null = null;
  for (let i = 0; i < events.length; i++) {
    const at = eventAt.get(key, first + i, streamId);
    if (at?.event_id !== events[i].id) return null;
    position = BigInt(at.position);
  }
  return position;
}

const appendOne = ({ streamId, events, expectedRevision, unchangedSinceEpoch }: AppendRequest): AppendOutcome => {
  const current = streamRevision.get(streamId)?.revision ?? -1;
  const key = streamKey(streamId);
  const stored = alreadyStored(key, streamId, events, expectedRevision, current);
  if (stored !== null) return { ok: true, nextRevision: current, position: stored };
  const matches = expectedRevision === 'any' || (expectedRevision === 'no_stream' ? current === -1 : expectedRevision === current);
  // The epoch first: whether the revision matches or not, a state decided on without a read is then not the stream's.
  if (unchangedSinceEpoch !== undefined && unchangedSinceEpoch !== epoch) throw new WrongRevision(expectedRevision, current, true);
  if (!matches) throw new WrongRevision(expectedRevision, current);
  let revision = current;
  const positions: bigint[] = [];
  const now = Date.now();
  for (const e of events) {
    revision += 1;
    positions.push(BigInt(insert.run(streamId, key, revision, e.id, e.type, e.data, e.metadata, now).lastInsertRowid));
  }
  setRevision.run(streamId, revision);
  return { ok: true, nextRevision: revision, position: positions[positions.length - 1] ?? 0n, stored: { createdAt: now, positions } };
};

/** Events deleted per transaction: a few milliseconds of the write lock each, appends let in between. */
const DELETE_SLICE = 2000;
const nextTurn = (ms = 0) => new Promise<void>((resolve) => (ms ? setTimeout(resolve, ms) : setImmediate(resolve)));

/**
 * Deletes a stream (erasure). Its events go in slices, each a transaction of its own, so that a history of 100,000
 * events never holds the write lock (and every other user's append) for long; appends that arrive meanwhile are
 * handled between slices. A stop half-way leaves the oldest events deleted and the rest: the erasure is done again.
 */
async function deleteStreamInSlices(id: number, streamId: string): Promise<void> {
  try {
    const key = streamKey(streamId);
    while (db.transaction(() => deleteEventsSlice(key, streamId, DELETE_SLICE)).immediate() === DELETE_SLICE) await nextTurn();
    db.transaction(() => {
      deleteEventsSlice(key, streamId, Number.MAX_SAFE_INTEGER);
      const row = blankStream.get(streamId);
      if (row !== undefined) deleteStreamRow.run(row);
      // secure_delete zeroes the deleted rows; the events' indexes hold stream keys only (sqlite-schema.ts), but the
      // streams table's primary key keeps copies of ids as dividers in its interior pages: rebuilt, it has none. One
      // row per stream: its cost grows with the number of streams, not of events.
      db.exec(`REINDEX ${STREAMS_ID_INDEX}`);
    }).immediate();
    // Then an append decided on a state folded before the deletion is refused. Not at its start as well: every write in
    // flight would be refused and decided again behind the deletion's slices, for no safety, since an append between
    // the slices is deleted by the last one, as any write the erasure overtakes.
    epoch++;
    // The WAL still holds earlier images of those pages: copy the zeroed pages into the database file and truncate
    // the WAL to nothing, so that the deleted bytes are in neither file. A reader in the middle of a read makes the
    // checkpoint report busy; it is tried again, appends let in between. Bounded in time: still busy after that, the
    // deletion is reported as failed, so an erasure is never confirmed with bytes left behind.
    const until = Date.now() + 15_000;
    for (;;) {
      const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
      if (result === undefined || result.busy === 0) break;
      if (Date.now() > until) {
        parentPort!.postMessage({
          id,
          failure: 'the WAL could not be truncated after the deletion (readers kept it busy)',
        } satisfies WriterReply);
        return;
      }
      await nextTurn(20);
    }
    parentPort!.postMessage({ id, outcomes: [], epoch } satisfies WriterReply);
  } catch (error) {
    parentPort!.postMessage({ id, failure: (error as Error).message, epoch } satisfies WriterReply);
  }
}

parentPort!.on('message', (request: WriterRequest) => {
  try {
    if (request.type === 'probe') {
      // A row larger than a page (it needs room, as an append does), deleted in the same commit. The table is made
      // here, not at open: a store opened on a full disk must still start (and read).
      db.transaction(() => {
        db.exec('CREATE TABLE IF NOT EXISTS write_probe (id INTEGER PRIMARY KEY, filler BLOB)');
        db.exec('DELETE FROM write_probe');
        db.exec('INSERT INTO write_probe (id, filler) VALUES (1, zeroblob(65536))');
        db.exec('DELETE FROM write_probe');
      }).immediate();
      parentPort!.postMessage({ id: request.id, outcomes: [] } satisfies WriterReply);
      return;
    }
    if (request.type === 'delete') {
      void deleteStreamInSlices(request.id, request.streamId);
      return;
    }
    // Group commit: one transaction and one fsync for the batch; a savepoint (nested transaction) per
    // append, so a refused append rolls back alone.
    const outcomes: AppendOutcome[] = [];
    let before = 0n;
    db.transaction(() => {
      // Inside the write transaction: no other writer can add an event between this and the batch's own.
      before = lastPosition.get()?.position ?? 0n;
      observeOtherWriters();
      for (const append of request.batch) {
        try {
          outcomes.push(db.transaction(() => appendOne(append))());
        } catch (error) {
          if (storageFailure(error)) throw error;
          outcomes.push(
            error instanceof WrongRevision
              ? {
                  ok: false,
                  wrongRevision: { expected: error.expected, actual: error.actual, ...(error.epochMoved && { epochMoved: true }) },
                  message: error.message,
                }
              : { ok: false, message: (error as Error).message },
          );
        }
      }
    }).immediate();
    parentPort!.postMessage({ id: request.id, outcomes, before, epoch } satisfies WriterReply);
  } catch (error) {
    // The commit itself failed: nothing of the batch is stored.
    parentPort!.postMessage({ id: request.id, failure: (error as Error).message } satisfies WriterReply);
  }
});
