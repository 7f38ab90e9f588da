import { createHash } from 'node:crypto';
import type { Client, Pool, QueryConfig } from 'pg';
import { SchemaOnce, inTransaction, postgresPool, sqlStateOf, unavailableAs } from './postgres-pool';
import { BatchedReads } from './batched-reads';
import { backoffDelayMs } from '@udp/retry';
import { PollingSubscription } from './polling-subscription';
import { prefixSuccessor } from './prefix-range';
import { LOCK_CLASS, NOTIFY_CHANNEL, SCHEMA, SCHEMA_LOCK, segmentIndex } from './postgres-schema';
import { Coalesced, KeyCache, freshKey, isSealed, seal, unseal, type StreamKey } from './postgres-keys';
import { scrubDeletedKeys } from './postgres-scrub';
import { LastWriteFailure } from './write-failure';
import type { AppendOptions, AppendResult, Backlog, BatchHandler, EventHandler, EventStore, EventToAppend } from './port';
import type { ReadStreamOptions, RecordedEvent, StreamRead, Subscription, SubscriptionOptions } from './port';
import { StoreUnavailableError, WrongExpectedRevisionError } from './port';

// Required when the adapter is used, not at import: the embedded mode need not load the driver.
const pg = () => require('pg') as typeof import('pg');

/**
 * The event store on PostgreSQL (node-postgres), for the distributed mode: every replica of every service appends to
 * and follows one database, as with KurrentDB. Tables and the append function: postgres-schema.ts.
 *
 * **Appends** are group-committed like the SQLite store's: the appends that arrive while one commit is under way go
 * together in the next, one call of `udp_append` (one round trip, one transaction, one WAL flush), each append with
 * its own expected-revision check and outcome. A retry of an append already stored (the same event ids where it put
 * them) is answered as done, as the port says.
 *
 * **The feed.** A sequence number alone cannot order the feed: a transaction that took position 10 may commit after
 * one that took 11, and a reader that saw 11 and moved its checkpoint past it would never read 10 (the classic trap).
 * So, as Emmett's PostgreSQL store does, each event also keeps the id of the transaction that stored it, and the feed
 * is read in (transaction id, position) order and only below `pg_snapshot_xmin(pg_current_snapshot())`, the oldest
 * transaction still open: every transaction below it has ended, and any transaction that has not yet written gets a
 * larger id, so nothing can ever appear below what a reader has passed. The position handed to consumers is that pair
 * in one bigint, `transaction id << 64 | position` (`encodePosition`): strictly increasing in delivery order,
 * resumable exactly, and known to the append before it commits (its own transaction id and positions), so an append's
 * answer and the checkpoints projectors save compare as they must (read-your-writes waits on them). A per-commit
 * sequence number given after the commit was the other way: it needs a second write per commit and a process that
 * numbers commits, and an event is in the feed only once numbered. The cost of the way taken: a transaction that
 * stays open (on any database of the server, if it has written) holds the feed back until it ends; `caughtUp` waits
 * for it, and the appends' own transactions are short.
 *
 * **Waking.** Each append's transaction sends a NOTIFY (delivered at commit) that one LISTEN connection per store
 * object turns into a read by every subscription; every 500 ms they read anyway, so a notification lost with its
 * connection (reconnected with back-off) costs at most that. A read that found events held back by an older open
 * transaction reads again soon (10 ms, doubling up to the poll).
 *
 * **Segments.** Each event keeps the hash of its stream's user key (`segmentKeyOf`); a subscription that asks for
 * `segments` reads only theirs, through an index per segment count (`SubscriptionOptions.segments`).
 *
 * **Erasure (crypto-shredding).** Deleted rows stay in PostgreSQL's pages until vacuumed (and a page's free space is
 * not zeroed then), and in WAL segments until they are removed. So each stream's events are stored sealed with a key
 * of the stream's own (postgres-keys.ts: `data` and `metadata`, AES-256-GCM; stream ids, event ids and types stay
 * plain), and `deleteStream` deletes the key with the stream, then scrubs: `VACUUM FULL` of the keys table (a new file
 * with the live keys only; the old one is emptied at once and unlinked at the next checkpoint), `pg_switch_wal()` and a
 * `CHECKPOINT`, after which the segments that held the key are removed, not recycled (the server must run with
 * `wal_recycle = off`). A standby replays the rewrite and removes its segments at its next restartpoint. The keys
 * table holds one short row per stream, so the scrub's cost grows with the number of streams, not with the user's
 * events; erasures that come together share one scrub. Keys are cached per stream (LRU, `keyCacheSize`): an append
 * to a stream already written or read by this process needs no lookup. Needs a role that may run CHECKPOINT and
 * `pg_switch_wal()` (a superuser, or `pg_checkpoint` and a grant).
 */
export interface PostgresEventStoreOptions {
  /** Connections of the pool (appends use one at a time, reads the others). Default 8. */
  maxConnections?: number;
  /** How often subscriptions read when no notification came. Default 500 ms. */
  pollMs?: number;
  /** `application_name` of the connections. */
  applicationName?: string;
  /** Streams whose keys are kept in memory. Default 10,000. */
  keyCacheSize?: number;
}

/** Events of one commit at most: a larger batch of appends is split (a single larger append goes alone). */
const MAX_BATCH_EVENTS = 2000;
/** Pauses before connecting the listener again: doubling from 100 ms up to 5 s. */
const RECONNECT_BACKOFF = { baseMs: 100, maxMs: 5000 };

const PREPARE_BITS = 64n;
const PREPARE_MASK = (1n << PREPARE_BITS) - 1n;

/** The feed position of an event: its transaction id, then its position (see "The feed" above). */
export function encodePosition(transactionId: bigint, position: bigint): bigint {
  return (transactionId << PREPARE_BITS) | (position & PREPARE_MASK);
}

export function decodePosition(encoded: bigint): { transactionId: bigint; position: bigint } {
  return { transactionId: encoded >> PREPARE_BITS, position: encoded & PREPARE_MASK };
}

/**
 * The user key of a stream for segments: what follows its first `-`, up to its first `/` (`history-<user>`,
 * `preference.v2-<user>/<key>`), or null when it has no `-`. It is the key `segmentOf` (libs/eventsourcing) hashes for
 * a projection whose prefix has exactly one `-`, at its end (`history-`); a projection of another prefix
 * (`qc-item-`) is not filtered by segment here (`segmentFilterApplies`).
 */
export function segmentKeyOf(streamId: string): string | null {
  const dash = streamId.indexOf('-');
  return dash < 0 ? null : streamId.slice(dash + 1).split('/')[0];
}

/** The hash of a segment key: its segment among `count` is this modulo `count` (segments.ts `segmentOf`). */
export function segmentHash(key: string): number {
  return createHash('sha1').update(key).digest().readUInt32BE(0);
}

/** Whether the stored segment hash is the one `segmentOf` gives every stream of these prefixes. */
export function segmentFilterApplies(prefixes: readonly string[]): boolean {
  return prefixes.length > 0 && prefixes.every((p) => p.indexOf('-') === p.length - 1);
}

interface PendingAppend {
  streamId: string;
  events: EventToAppend[];
  expectedRevision: AppendOptions['expectedRevision'];
  key: StreamKey;
  /** Made by this append: stored when the stream has no key; never a key read from the store or the cache. */
  fresh: boolean;
  /** The events' data and metadata sealed with `key`. */
  sealed: Array<{ data: string; metadata: string }>;
  /** Appends sent again after a `rekey` answer. */
  rekeys: number;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

/** Times an append is sent again with its stream's current key before it fails (each is a stream deleted meanwhile). */
const MAX_REKEYS = 3;

interface EventRow {
  xid: string;
  position: string;
  stream_id: string;
  revision: string;
  event_id: string;
  type: string;
  data: string;
  metadata: string;
  created_at: string;
  key_id: string | null;
  key: Buffer | null;
}

/** An event's columns with its stream's key, read in the same statement: a visible event's key is visible with it. */
const EVENT_COLUMNS = (e: string) =>
  `${e}.transaction_id::text AS xid, ${e}.position, ${e}.stream_id, ${e}.revision, ${e}.event_id, ${e}.type, ${e}.data, ${e}.metadata, ${e}.created_at,
   (SELECT k.key_id::text FROM udp_stream_keys AS k WHERE k.stream_id = ${e}.stream_id) AS key_id,
   (SELECT k.key FROM udp_stream_keys AS k WHERE k.stream_id = ${e}.stream_id) AS key`;

/** Below this frontier (the oldest open transaction) the feed is complete; `$1`, `$2`: the cursor (xid, position). */
const AFTER_CURSOR = (e: string) => `(${e}.transaction_id, ${e}.position) > ($1::xid8, $2::bigint)`;

/**
 * A page of the feed after the cursor, below the frontier, and whether committed events wait above it (`blocked`):
 * `$3` the page size, `$4` (with segments) the segment ids. One statement, so one snapshot: the frontier is the
 * statement's own. Segments: the next events of each segment by its index, merged.
 */
function feedQuery(segmentCount: number | undefined): string {
  const window =
    segmentCount === undefined
      ? `SELECT ${EVENT_COLUMNS('e')} FROM udp_events AS e
         WHERE ${AFTER_CURSOR('e')} AND e.transaction_id < f.xmin ORDER BY e.transaction_id, e.position LIMIT $3`
      : `SELECT x.* FROM unnest($4::int[]) AS g(segment) CROSS JOIN LATERAL (
           SELECT ${EVENT_COLUMNS('e')}, e.transaction_id AS sort_xid FROM udp_events AS e
           WHERE (e.segment_hash % ${segmentCount}) = g.segment AND ${AFTER_CURSOR('e')} AND e.transaction_id < f.xmin
           ORDER BY e.transaction_id, e.position LIMIT $3) AS x
         ORDER BY x.sort_xid, x.position LIMIT $3`;
  return `SELECT b.blocked, w.* FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin) AS f
    CROSS JOIN LATERAL (SELECT EXISTS (SELECT 1 FROM udp_events AS h WHERE h.transaction_id >= f.xmin)) AS b(blocked)
    LEFT JOIN LATERAL (${window}) AS w ON true`;
}

/** What a subscription has not handled: events of its prefixes (`$4`) among the next `$3` after the cursor. */
function backlogQuery(segmentCount: number | undefined): string {
  const window =
    segmentCount === undefined
      ? `SELECT e.stream_id, e.created_at FROM udp_events AS e WHERE ${AFTER_CURSOR('e')}
         ORDER BY e.transaction_id, e.position LIMIT $3`
      : `SELECT x.stream_id, x.created_at FROM unnest($5::int[]) AS g(segment) CROSS JOIN LATERAL (
           SELECT e.stream_id, e.created_at, e.transaction_id, e.position FROM udp_events AS e
           WHERE (e.segment_hash % ${segmentCount}) = g.segment AND ${AFTER_CURSOR('e')}
           ORDER BY e.transaction_id, e.position LIMIT $3) AS x
         ORDER BY x.transaction_id, x.position LIMIT $3`;
  return `SELECT count(*)::int AS events, min(w.created_at)::text AS oldest FROM (${window}) AS w
    WHERE EXISTS (SELECT 1 FROM unnest($4::text[]) AS p(prefix) WHERE starts_with(w.stream_id, p.prefix))`;
}

const READ_STREAM = `SELECT s.revision AS stream_revision, ${EVENT_COLUMNS('e')}
  FROM udp_streams AS s LEFT JOIN udp_events AS e ON e.stream_id = s.stream_id AND e.revision >= $2
  WHERE s.stream_id = $1 ORDER BY e.revision`;

/** Several streams read in one statement (`BatchedReads`): `$1` their ids, `$2` each one's first revision; `i` says whose. */
const READ_STREAMS = `SELECT q.i, s.revision AS stream_revision, ${EVENT_COLUMNS('e')}
  FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS q(stream_id, from_revision, i)
  JOIN udp_streams AS s ON s.stream_id = q.stream_id
  LEFT JOIN udp_events AS e ON e.stream_id = s.stream_id AND e.revision >= q.from_revision
  ORDER BY q.i, e.revision`;

const READ_KEY = 'SELECT key_id::text AS key_id, key FROM udp_stream_keys WHERE stream_id = $1';

const APPEND = 'SELECT r_outcome, r_revision, r_transaction_id, r_positions FROM udp_append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)';

/** SQLSTATE of a transaction PostgreSQL failed to end a deadlock. */
const DEADLOCK_DETECTED = '40P01';

/** Events of a stream deleted per transaction, from its oldest: each short, so it holds the feed's frontier briefly. */
const DELETE_SLICE = 2000;
const DELETE_SLICE_SQL = `DELETE FROM udp_events WHERE stream_id = $1 AND revision <= (
  SELECT revision FROM udp_events WHERE stream_id = $1 ORDER BY revision OFFSET ${DELETE_SLICE - 1} LIMIT 1)`;

/** The server could not be reached or cannot serve now: a 503 for the request, not a 500. */
const unavailable = (error: unknown) => unavailableAs('event store', error);

/** No NUL, no lone surrogate (with the `u` flag a pair is one code point, so `\p{Cs}` matches only a lone one). */
const wellFormed = (s: string) => !s.includes('\0') && !/\p{Cs}/u.test(s);

export class PostgresEventStore implements EventStore {
  private readonly pool: Pool;
  private readonly schema: SchemaOnce;
  private readonly subscriptions = new Set<PollingSubscription>();
  private pending: PendingAppend[] = [];
  private writing: Promise<void> | null = null;
  /** The last append or deletion that failed: DOWN until a write (or `ping`'s probe) succeeds. */
  private readonly writeFailures = new LastWriteFailure();
  private readonly segmentIndexes = new Map<number, Promise<void>>();
  private readonly keys: KeyCache;
  /** The erasures' scrub (see "Erasure" above), shared by those that come together. */
  private readonly scrub = new Coalesced(() => scrubDeletedKeys(this.pool, 'udp_stream_keys', unavailable));
  private listener: Client | null = null;
  private listening: Promise<void> | null = null;
  private reconnect: NodeJS.Timeout | null = null;
  private reconnects = 0;
  private poll: NodeJS.Timeout | null = null;
  private closed = false;
  /** Told of each loss of the LISTEN connection before it connects again (logging, tests). */
  onListenerProblem?: (error: unknown, attempt: number) => void;

  constructor(
    private readonly url: string,
    private readonly options: PostgresEventStoreOptions = {},
  ) {
    this.pool = postgresPool(url, { maxConnections: options.maxConnections, applicationName: options.applicationName ?? 'udp-eventstore' });
    this.schema = new SchemaOnce('event store', () => this.createSchema());
    this.keys = new KeyCache(options.keyCacheSize ?? 10_000);
  }

  /**
   * The tables and functions, made once per database (replicas that start together wait for each other). A database
   * whose schema is this version's (`udp_schema_version`) is left alone: its DDL would lock tables that appends use
   * (`ALTER TABLE ... IF NOT EXISTS` takes an exclusive lock even when there is nothing to do).
   */
  private async createSchema(): Promise<void> {
    const version = createHash('sha256').update(SCHEMA).digest('hex');
    const current = await this.pool
      .query<{ version: string }>('SELECT version FROM udp_schema_version')
      .then(({ rows }) => rows[0]?.version === version)
      .catch(() => false); // no such table yet: made below
    if (current) return;
    for (let attempt = 1; ; attempt++) {
      try {
        await inTransaction(this.pool, async (client) => {
          await client.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_CLASS, SCHEMA_LOCK]);
          await client.query(SCHEMA);
          await client.query(
            'CREATE TABLE IF NOT EXISTS udp_schema_version (one boolean PRIMARY KEY DEFAULT true CHECK (one), version text NOT NULL)',
          );
          await client.query(
            'INSERT INTO udp_schema_version (version) VALUES ($1) ON CONFLICT (one) DO UPDATE SET version = excluded.version',
            [version],
          );
        });
        return;
      } catch (error) {
        // Its `IF NOT EXISTS` statements lock the tables they name, and can meet another process's erasure scrub or
        // append in a deadlock, which PostgreSQL ends by failing one side: that side's schema is made again.
        if (sqlStateOf(error) !== DEADLOCK_DETECTED || attempt >= 5) throw error;
        await new Promise((resolve) => setTimeout(resolve, backoffDelayMs(attempt, { baseMs: 20, maxMs: 500 })));
      }
    }
  }

  /** The store's schema made, then the query; any failure to reach the server as StoreUnavailableError. */
  private async query<R extends object>(query: QueryConfig | string, values?: unknown[]): Promise<R[]> {
    await this.schema.ready();
    try {
      return (await this.pool.query<R>(query as QueryConfig, values)).rows;
    } catch (error) {
      throw unavailable(error);
    }
  }

  /** Every write reads its stream first: reads that pile up under load go together (one round trip for many). */
  private readonly streamReads = new BatchedReads<StreamToRead, StreamRead>((streams) => this.readStreams(streams));

  readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StreamRead> {
    return this.streamReads.read({ streamId, fromRevision: options.fromRevision ?? 0 });
  }

  private async readStreams(streams: StreamToRead[]): Promise<StreamRead[]> {
    if (streams.length === 1) {
      const [{ streamId, fromRevision }] = streams;
      const rows = await this.query<EventRow & { stream_revision: string }>({ name: 'udp_read_stream', text: READ_STREAM }, [
        streamId,
        fromRevision,
      ]);
      return [this.streamReadOf(streamId, rows)];
    }
    const rows = await this.query<EventRow & { stream_revision: string; i: string }>({ name: 'udp_read_streams', text: READ_STREAMS }, [
      streams.map((s) => s.streamId),
      streams.map((s) => s.fromRevision),
    ]);
    const byStream = streams.map(() => [] as typeof rows);
    for (const row of rows) byStream[Number(row.i) - 1].push(row);
    return byStream.map((own, i) => this.streamReadOf(streams[i].streamId, own));
  }

  /** A stream's rows (none: no stream; one of nulls: a stream with no event from the revision asked); its key kept. */
  private streamReadOf(streamId: string, rows: Array<EventRow & { stream_revision: string }>): StreamRead {
    if (rows.length === 0) return { revision: -1, events: [] };
    const key = rowKey(rows[0]);
    if (key) this.keys.set(streamId, key);
    return { revision: Number(rows[0].stream_revision), events: rows.filter((r) => r.position !== null).map(toRecorded) };
  }

  async appendToStream(streamId: string, events: EventToAppend[], options: AppendOptions): Promise<AppendResult> {
    if (this.closed) throw new StoreUnavailableError('event store', 'the store is closed');
    // PostgreSQL's text holds no NUL, and a lone surrogate would be stored as U+FFFD: refused, not changed.
    const bad = [streamId, ...events.flatMap((e) => [e.id, e.type])].find((s) => !wellFormed(s));
    if (bad !== undefined) throw new Error(`stream ${streamId}: ${JSON.stringify(bad)} is not storable text`);
    // A new stream gets a key of its own without a lookup; if it exists after all, the append is answered `rekey`.
    const cached = this.keys.get(streamId);
    const { key, fresh } = cached
      ? { key: cached, fresh: false }
      : options.expectedRevision === 'no_stream'
        ? { key: freshKey(), fresh: true }
        : await this.keyOf(streamId);
    return new Promise((resolve, reject) => {
      const append: PendingAppend = {
        streamId,
        events,
        expectedRevision: options.expectedRevision,
        ...sealedWith(key, events, fresh),
        rekeys: 0,
        resolve,
        reject,
      };
      this.enqueue(append);
    });
  }

  /** The stream's key from the store, or one made afresh when it has none. */
  private async keyOf(streamId: string): Promise<{ key: StreamKey; fresh: boolean }> {
    const [row] = await this.query<{ key_id: string; key: Buffer }>({ name: 'udp_read_key', text: READ_KEY }, [streamId]);
    if (row) {
      const key = { id: BigInt(row.key_id), key: row.key };
      this.keys.set(streamId, key);
      return { key, fresh: false };
    }
    return { key: freshKey(), fresh: true };
  }

  private enqueue(append: PendingAppend): void {
    this.pending.push(append);
    if (!this.writing) this.writing = this.commitPending();
  }

  /** Sent again, sealed with the stream's key now (its cached one belonged to a stream deleted since). */
  private async rekey(append: PendingAppend): Promise<void> {
    this.keys.delete(append.streamId);
    if (++append.rekeys > MAX_REKEYS) {
      append.reject(new Error(`stream ${append.streamId}: its key changed ${MAX_REKEYS} times during one append`));
      return;
    }
    try {
      const { key, fresh } = await this.keyOf(append.streamId);
      Object.assign(append, sealedWith(key, append.events, fresh));
      this.enqueue(append);
    } catch (error) {
      append.reject(error);
    }
  }

  /** Sends what is pending as one call, then whatever arrived meanwhile, until nothing is left. */
  private async commitPending(): Promise<void> {
    // Yield first: the caller assigns `this.writing` from our promise.
    await Promise.resolve();
    while (this.pending.length > 0) {
      let events = this.pending[0].events.length;
      let take = 1;
      while (take < this.pending.length && events + this.pending[take].events.length <= MAX_BATCH_EVENTS)
        events += this.pending[take++].events.length;
      const batch = this.pending.slice(0, take);
      this.pending = this.pending.slice(take);
      await this.commit(batch);
    }
    this.writing = null;
  }

  private async commit(batch: PendingAppend[]): Promise<void> {
    const all = batch.flatMap((a) => a.events);
    const createdAt = Date.now();
    let rows: Array<{ r_outcome: string; r_revision: string; r_transaction_id: string | null; r_positions: string[] | null }>;
    try {
      rows = await this.query({ name: 'udp_append', text: APPEND }, [
        batch.map((a) => a.streamId),
        batch.map((a) => (a.expectedRevision === 'no_stream' ? -1 : a.expectedRevision === 'any' ? -2 : a.expectedRevision)),
        batch.map((a) => a.events.length),
        batch.map((a) => {
          const key = segmentKeyOf(a.streamId);
          return key === null ? null : segmentHash(key);
        }),
        all.map((e) => e.id),
        all.map((e) => e.type),
        batch.flatMap((a) => a.sealed.map((e) => e.data)),
        batch.flatMap((a) => a.sealed.map((e) => e.metadata)),
        createdAt,
        batch.map((a) => a.key.id.toString()),
        batch.map((a) => (a.fresh ? a.key.key : null)),
      ]);
      this.writeFailures.succeeded();
    } catch (error) {
      // Not known whether it committed (the connection lost at the commit): a retry of the same ids is recognised.
      this.writeFailures.failed(error);
      for (const append of batch) append.reject(error);
      return;
    }
    batch.forEach((append, i) => {
      const row = rows[i];
      const revision = Number(row.r_revision);
      if (row.r_outcome === 'rekey') {
        void this.rekey(append);
        return;
      }
      // The stream's key, known to be its key now (a fresh one was stored, or it matched).
      this.keys.set(append.streamId, append.key);
      if (row.r_outcome === 'conflict') {
        append.reject(new WrongExpectedRevisionError(append.streamId, append.expectedRevision, revision));
        return;
      }
      const xid = row.r_transaction_id === null ? null : BigInt(row.r_transaction_id);
      const positions = xid === null ? [] : (row.r_positions ?? []).map((p) => encodePosition(xid, BigInt(p)));
      append.resolve({
        nextRevision: revision,
        position: positions[positions.length - 1] ?? 0n,
        ...(row.r_outcome === 'appended' && positions.length > 0 && { stored: { positions, createdAt } }),
      });
    });
  }

  /**
   * Erasure: the stream's events are deleted from the oldest, a slice of 2,000 per transaction (a short one: an open
   * transaction holds the feed back), then what is left, the stream's row and its key under the stream's lock, so an
   * append made meanwhile is deleted too; then the scrub (see "Erasure" above): the deleted rows' bytes may stay, sealed
   * with a key that no file holds any more.
   */
  async deleteStream(streamId: string): Promise<void> {
    this.keys.delete(streamId);
    try {
      for (;;) {
        await this.query({ name: 'udp_delete_slice', text: DELETE_SLICE_SQL }, [streamId]);
        const left = await this.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM (SELECT 1 FROM udp_events WHERE stream_id = $1 LIMIT $2) AS e',
          [streamId, DELETE_SLICE],
        );
        if (left[0].n < DELETE_SLICE) break;
      }
      await this.query('SELECT udp_erase_stream($1)', [streamId]);
      this.keys.delete(streamId);
      // Even when there was nothing to delete: a deletion retried after its scrub failed must not confirm without one.
      await this.scrub.request();
      this.writeFailures.succeeded();
    } catch (error) {
      this.writeFailures.failed(error);
      throw error;
    }
  }

  async listStreams(prefix: string): Promise<string[]> {
    const successor = prefixSuccessor(prefix);
    const rows =
      successor === undefined
        ? await this.query<{ stream_id: string }>('SELECT stream_id FROM udp_streams WHERE stream_id >= $1', [prefix])
        : await this.query<{ stream_id: string }>('SELECT stream_id FROM udp_streams WHERE stream_id >= $1 AND stream_id < $2', [
            prefix,
            successor,
          ]);
    return rows.map((r) => r.stream_id).filter((id) => id.startsWith(prefix));
  }

  subscribeBatches(options: SubscriptionOptions, handler: BatchHandler): Subscription {
    return this.subscribe(options, handler);
  }

  subscribe(options: SubscriptionOptions, handler: EventHandler | BatchHandler): Subscription {
    const segments = options.segments && segmentFilterApplies(options.streamPrefixes) ? options.segments : undefined;
    const count = segments?.count;
    if (count !== undefined && (!Number.isInteger(count) || count < 1)) throw new Error(`segments.count ${count}: a positive integer`);
    const feed = feedQuery(count);
    const backlog = backlogQuery(count);
    const ids = segments?.ids ?? [];
    let pause = 0;
    let again: NodeJS.Timeout | null = null;
    const readAfter = async (after: bigint | undefined, limit: number): Promise<RecordedEvent[]> => {
      if (count !== undefined) await this.ensureSegmentIndex(count);
      const { transactionId, position } = decodePosition(after ?? 0n);
      const values: unknown[] = [transactionId.toString(), position.toString(), limit];
      if (count !== undefined) values.push(ids);
      const rows = await this.query<EventRow & { blocked: boolean }>({ text: feed }, values);
      // Events committed above the frontier wait for an older transaction to end, which may send no notification.
      if (rows[0]?.blocked && rows.length < limit) {
        pause = Math.min(this.pollMs, pause ? pause * 2 : 10);
        if (again) clearTimeout(again);
        again = setTimeout(() => sub.notify(), pause);
        again.unref();
      } else pause = 0;
      return rows.filter((r) => r.position !== null).map(toRecorded);
    };
    const backlogAfter = async (after: bigint | undefined, prefixes: string[], limit: number): Promise<Backlog> => {
      const { transactionId, position } = decodePosition(after ?? 0n);
      const values: unknown[] = [transactionId.toString(), position.toString(), limit, prefixes];
      if (count !== undefined) values.push(ids);
      const [row] = await this.query<{ events: number; oldest: string | null }>({ text: backlog }, values);
      return { events: row.events, oldestCreatedAt: row.oldest === null ? undefined : Number(row.oldest) };
    };
    const sub = new PollingSubscription(
      options,
      readAfter,
      handler,
      () => {
        if (again) clearTimeout(again);
        this.subscriptions.delete(sub);
        if (this.subscriptions.size === 0) this.stopWaking();
      },
      backlogAfter,
    );
    this.subscriptions.add(sub);
    this.startWaking();
    return {
      // Events committed before the call may still be above the frontier (an older transaction open): wait until every
      // transaction that was open at the call has ended, then read up to the end.
      caughtUp: async () => {
        await this.frontierPasses(() => !this.subscriptions.has(sub));
        await sub.caughtUp();
      },
      backlog: (limit) => sub.backlog(limit),
      stop: () => sub.stop(),
    };
  }

  private get pollMs(): number {
    return this.options.pollMs ?? 500;
  }

  /** Resolves once every transaction open (or committed) now is below the feed's frontier; retried while unreachable. */
  private async frontierPasses(stopped: () => boolean): Promise<void> {
    let target: string | null = null;
    for (let attempt = 1, pause = 2; !stopped() && !this.closed; attempt++) {
      try {
        if (target === null)
          [{ target }] = await this.query<{ target: string }>('SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS target');
        const [{ passed }] = await this.query<{ passed: boolean }>('SELECT pg_snapshot_xmin(pg_current_snapshot()) >= $1::xid8 AS passed', [
          target,
        ]);
        if (passed) return;
        pause = Math.min(50, pause * 2);
      } catch {
        pause = backoffDelayMs(attempt, { baseMs: 100, maxMs: 2000 });
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  /** The index of a segment count, made on first use (the table locked for writes while it is built). */
  private ensureSegmentIndex(count: number): Promise<void> {
    let made = this.segmentIndexes.get(count);
    if (!made) {
      made = (async () => {
        const client = await this.pool.connect().catch((error: unknown) => Promise.reject(unavailable(error)));
        try {
          await client.query('BEGIN');
          await client.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_CLASS, SCHEMA_LOCK]);
          await client.query(segmentIndex(count));
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw unavailable(error);
        } finally {
          client.release();
        }
      })();
      made.catch(() => this.segmentIndexes.delete(count));
      this.segmentIndexes.set(count, made);
    }
    return made;
  }

  private wakeAll(): void {
    for (const s of this.subscriptions) s.notify();
  }

  /** The LISTEN connection and the poll, while there are subscriptions. */
  private startWaking(): void {
    if (this.closed) return;
    if (!this.poll) {
      this.poll = setInterval(() => this.wakeAll(), this.pollMs);
      this.poll.unref();
    }
    if (!this.listener && !this.listening && !this.reconnect) this.listening = this.listen();
  }

  private stopWaking(): void {
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
    if (this.reconnect) clearTimeout(this.reconnect);
    this.reconnect = null;
    const listener = this.listener;
    this.listener = null;
    if (listener) {
      listener.removeAllListeners('end');
      void listener.end().catch(() => undefined);
    }
  }

  private async listen(): Promise<void> {
    const client = new (pg().Client)({
      connectionString: this.url,
      connectionTimeoutMillis: 5000,
      keepAlive: true,
      application_name: `${this.options.applicationName ?? 'udp-eventstore'}-listen`,
    });
    let lost = false;
    const onLost = (error: unknown) => {
      if (lost) return;
      lost = true;
      if (this.listener === client) this.listener = null;
      void client.end().catch(() => undefined);
      if (this.closed || this.subscriptions.size === 0) return;
      this.reconnects++;
      this.onListenerProblem?.(error, this.reconnects);
      this.reconnect = setTimeout(
        () => {
          this.reconnect = null;
          if (!this.closed && this.subscriptions.size > 0 && !this.listener && !this.listening) this.listening = this.listen();
        },
        backoffDelayMs(this.reconnects, RECONNECT_BACKOFF),
      );
      this.reconnect.unref();
    };
    client.on('error', onLost);
    client.on('end', () => onLost(new Error('the LISTEN connection ended')));
    client.on('notification', () => this.wakeAll());
    try {
      await client.connect();
      await client.query(`LISTEN ${NOTIFY_CHANNEL}`);
      if (this.closed || this.subscriptions.size === 0 || lost) {
        client.removeAllListeners('end');
        await client.end().catch(() => undefined);
        return;
      }
      this.listener = client;
      // Not sent to it: what was committed while it was not listening is read now.
      if (this.reconnects > 0) this.wakeAll();
      this.reconnects = 0;
    } catch (error) {
      onLost(error);
    } finally {
      this.listening = null;
      // The connection may not keep the process alive: a store nobody closed must not hold a test run open.
      (client as unknown as { connection?: { stream?: { unref?: () => void } } }).connection?.stream?.unref?.();
    }
  }

  /**
   * Up when the server answers and takes writes (a standby does not). After a write that failed, a probe write must
   * succeed first (a transaction id taken and committed: refused by a standby, written to the WAL at commit).
   */
  async ping(): Promise<boolean> {
    try {
      if (this.writeFailures.current() !== null) {
        await this.query('SELECT pg_current_xact_id()');
        this.writeFailures.succeeded();
      }
      const [row] = await this.query<{ writable: boolean }>('SELECT NOT pg_is_in_recovery() AS writable');
      return row.writable;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    for (const s of [...this.subscriptions]) await s.stop();
    this.closed = true;
    this.stopWaking();
    while (this.listening) await this.listening;
    this.stopWaking();
    while (this.writing) await this.writing;
    await this.schema.settled();
    await this.pool.end();
  }
}

interface StreamToRead {
  streamId: string;
  fromRevision: number;
}

function rowKey(row: Pick<EventRow, 'key_id' | 'key'>): StreamKey | null {
  return row.key_id === null || row.key === null ? null : { id: BigInt(row.key_id), key: row.key };
}

function sealedWith(key: StreamKey, events: EventToAppend[], fresh: boolean): Pick<PendingAppend, 'key' | 'fresh' | 'sealed'> {
  return {
    key,
    fresh,
    sealed: events.map((e) => ({ data: seal(JSON.stringify(e.data), key), metadata: seal(JSON.stringify(e.metadata ?? {}), key) })),
  };
}

/** A stored payload: sealed, or plain JSON (written before events were sealed). */
function opened(stored: string, key: StreamKey | null, streamId: string): Record<string, unknown> {
  if (!isSealed(stored)) return JSON.parse(stored);
  if (!key) throw new Error(`stream ${streamId}: a sealed event without its stream's key`);
  return JSON.parse(unseal(stored, key));
}

function toRecorded(row: EventRow): RecordedEvent {
  const key = rowKey(row);
  return {
    id: row.event_id,
    streamId: row.stream_id,
    revision: Number(row.revision),
    position: encodePosition(BigInt(row.xid), BigInt(row.position)),
    type: row.type,
    data: opened(row.data, key, row.stream_id),
    metadata: opened(row.metadata, key, row.stream_id),
    createdAt: Number(row.created_at),
  };
}
