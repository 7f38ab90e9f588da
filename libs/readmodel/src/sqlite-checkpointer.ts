/**
 * The embedded read models' checkpointer: the entry of a worker thread (started by sqlite.ts) that copies the
 * write-ahead log into the database file every `intervalMs`, so that the copying and its fsyncs never block the event
 * loop that serves requests and applies events. The store asks for a copy after each commit (`{ checkpoint }`,
 * answered with the log's size) to start the log over (sqlite.ts, `copyCommitted`); its own connection checkpoints only
 * past 256 MiB of log.
 *
 * Loaded by file, never imported for its code (sqlite.ts imports only its types). In dist/ it is its own bundle
 * (tools/build.mjs); from the sources (jest) Node runs this file as it is, stripping its types: CommonJS `require`,
 * erasable TypeScript only (as libs/eventstore/src/sqlite-writer.ts).
 */

export interface CheckpointerData {
  file: string;
  intervalMs: number;
}

const { parentPort, workerData } = require('node:worker_threads') as typeof import('node:worker_threads');
const Database = require('better-sqlite3') as typeof import('better-sqlite3');

const { file, intervalMs } = workerData as CheckpointerData;
const db = new Database(file);
// A commit under way makes a checkpoint wait or stop early: it is tried again at the next interval, not waited for.
db.pragma('busy_timeout = 0');
db.pragma('synchronous = NORMAL');

/**
 * Frames in the log and frames copied into the file by a checkpoint; `whole`: it ran and copied all of the log (-1 and
 * false when it could not run: busy, or failing).
 */
function checkpoint(): { log: number; copied: number; whole: boolean } {
  try {
    // PASSIVE: copies what no reader still needs, beside the writer; the log starts over once all of it was copied.
    const [result] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number; log: number; checkpointed: number }>;
    const log = result?.log ?? -1;
    const copied = result?.checkpointed ?? -1;
    return { log, copied, whole: result?.busy === 0 && log >= 0 && copied === log };
  } catch {
    // Failing now: the next interval tries again; the log only grows meanwhile.
    return { log: -1, copied: -1, whole: false };
  }
}

/**
 * Asked by the store: stop; copy the log now (`checkpoint`: the number of the store's request and when it was made on
 * its clock, both answered back with what the copy did); or copy the live rows into a new file (an erasure's
 * compaction, see sqlite.ts).
 */
export type CheckpointerMessage = 'stop' | { checkpoint: number; at: number } | { vacuumInto: string };
export type CheckpointerReply =
  { vacuumed: string; error?: string } | { checkpointed: number; at: number; log: number; copied: number; whole: boolean };

const timer = setInterval(checkpoint, intervalMs);
/** The newest request to checkpoint not yet answered: requests that arrive together get one checkpoint. */
let asked: { checkpoint: number; at: number } | null = null;
parentPort!.on('message', (message: CheckpointerMessage) => {
  if (typeof message === 'object' && 'checkpoint' in message) {
    if (!asked)
      setImmediate(() => {
        const { checkpoint: checkpointed, at } = asked!;
        asked = null;
        // Asked just before the store stopped this thread: nothing to answer.
        if (!db.open) return;
        parentPort!.postMessage({ checkpointed, at, ...checkpoint() } satisfies CheckpointerReply);
      });
    asked = message;
    return;
  }
  if (message === 'stop') {
    clearInterval(timer);
    // TRUNCATE: the log copied whole and emptied here, so that the store's connection closes without that work on
    // the event loop (a compaction closes the old file's connection while the system serves requests).
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      checkpoint();
    }
    db.close();
    parentPort!.close();
    return;
  }
  // A read of the whole file as of now, in this thread: the store's connection goes on writing meanwhile (WAL).
  try {
    db.prepare('VACUUM INTO ?').run(message.vacuumInto);
    parentPort!.postMessage({ vacuumed: message.vacuumInto } satisfies CheckpointerReply);
  } catch (error) {
    parentPort!.postMessage({ vacuumed: message.vacuumInto, error: (error as Error).message } satisfies CheckpointerReply);
  }
});
