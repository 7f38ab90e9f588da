import type { Pool } from 'pg';
import { sqlStateOf } from './postgres-pool';

/**
 * The erasure's scrub on PostgreSQL, shared by the event store (its streams' keys) and the read models (their owners'
 * keys): after the rows of some keys were deleted, no byte of those keys is left in the primary's files. PostgreSQL
 * keeps a deleted row in its page until it is reused and in the WAL, so the keys table is written anew (`VACUUM
 * FULL`: a new file with the live rows only; the old one is emptied at once), then the WAL is switched to a new
 * segment and a `CHECKPOINT` removes every segment before it (the server runs with `wal_recycle = off`, so they are
 * unlinked, not renamed for reuse). A standby replays the rewrite and removes its segments at its next restartpoint.
 * Each wait is bounded (SCRUB_WAIT_MS); past it the scrub fails, and the erasure that asked is tried again.
 */

/** How long the rewrite of the keys table waits for its lock before it lets others go first and tries again. */
const KEYS_LOCK_TIMEOUT_MS = 50;
/** How long the scrub waits for older snapshots to end, and for the standbys to confirm its WAL switch. */
const SCRUB_WAIT_MS = 5000;
/** Whether a snapshot older than `$1` (an xid8) is held by another session of this database or by a standby's slot. */
const OLDER_SNAPSHOTS = `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database()
    AND backend_xmin IS NOT NULL AND age(backend_xmin) > age($1::xid8::xid))
  OR EXISTS (SELECT 1 FROM pg_replication_slots WHERE xmin IS NOT NULL AND age(xmin) > age($1::xid8::xid)) AS held`;
/** Replication slots whose standby has not confirmed a position in a segment after the one of `$1`. */
const LAGGING_SLOTS = `SELECT slot_name FROM pg_replication_slots, pg_size_bytes(current_setting('wal_segment_size')) AS size
  WHERE restart_lsn IS NOT NULL AND floor((restart_lsn - '0/0'::pg_lsn) / size) <= floor(($1::pg_lsn - '0/0'::pg_lsn) / size)`;

/**
 * Scrubs the keys deleted from `table` (a qualified, quoted name) before this call: `unavailable` turns a failure to
 * reach the server into the caller's error.
 */
export async function scrubDeletedKeys(pool: Pool, table: string, unavailable: (error: unknown) => unknown): Promise<void> {
  const query = async <R extends object>(text: string, values: unknown[] = [], name?: string): Promise<R[]> => {
    try {
      return (await pool.query<R>({ text, values, ...(name && { name }) })).rows;
    } catch (error) {
      throw unavailable(error);
    }
  };
  // VACUUM FULL copies a deleted row still visible to some snapshot (one taken before the deletion committed): it
  // waits until every snapshot of the database, and of a standby that reports them (a slot's xmin), is newer than the
  // deletions that asked for this scrub (all committed before its start).
  const [{ start }] = await query<{ start: string }>('SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS start');
  await until('an older snapshot is open', async () => {
    const [{ held }] = await query<{ held: boolean }>(OLDER_SNAPSHOTS, [start], 'udp_older_snapshots');
    return !held;
  });
  await rewrite(pool, table, unavailable);
  const [{ end }] = await query<{ end: string }>('SELECT pg_switch_wal()::text AS end');
  // A replication slot keeps every segment from its standby's last confirmed position: the checkpoint removes the
  // old ones only once each standby has confirmed a position in the new segment (a streaming one does within
  // milliseconds). `end` is within the old segment, just after the switch.
  await until('a replication slot keeps the WAL it must remove (its standby is behind)', async () => {
    const lagging = await query<{ slot_name: string }>(LAGGING_SLOTS, [end], 'udp_lagging_slots');
    return lagging.length === 0;
  });
  await query('CHECKPOINT');
}

/**
 * `VACUUM FULL` of the keys table with a short lock timeout, tried again until SCRUB_WAIT_MS: queued behind a long
 * reader of the table, its exclusive lock request would hold every statement that reads the keys behind it.
 */
async function rewrite(pool: Pool, table: string, unavailable: (error: unknown) => unknown): Promise<void> {
  const client = await pool.connect().catch((error: unknown) => Promise.reject(unavailable(error)));
  try {
    await client.query(`SET lock_timeout = ${KEYS_LOCK_TIMEOUT_MS}`);
    const deadline = Date.now() + SCRUB_WAIT_MS;
    for (let pause = 10; ; pause = Math.min(200, pause * 2)) {
      try {
        await client.query(`VACUUM (FULL) ${table}`);
        break;
      } catch (error) {
        if (sqlStateOf(error) !== '55P03' || Date.now() > deadline) throw unavailable(error);
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
    await client.query('RESET lock_timeout');
    client.release();
  } catch (error) {
    // Not back to the pool with the session's lock timeout, nor in an unknown state.
    client.release(true);
    throw error;
  }
}

/** Polls `done` (2 ms, doubling up to 100 ms) for at most SCRUB_WAIT_MS; then the scrub fails, saying `why`. */
async function until(why: string, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + SCRUB_WAIT_MS;
  for (let pause = 2; !(await done()); pause = Math.min(100, pause * 2)) {
    if (Date.now() > deadline) throw new Error(`erasure scrub: ${why}`);
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
