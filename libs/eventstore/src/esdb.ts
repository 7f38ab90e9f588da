import type { KurrentDBClient, ResolvedEvent } from '@kurrent/kurrentdb-client';
import type { AppendResult, EventStore, EventToAppend, ExpectedRevision } from './port';
import type { EventHandler, ReadStreamOptions, RecordedEvent, StreamRead, Subscription, SubscriptionOptions } from './port';
import { StoreUnavailableError, WrongExpectedRevisionError } from './port';
import { LastWriteFailure } from './write-failure';
import { LRUCache } from 'lru-cache';
import { backoffDelayMs } from '@udp/retry';

/** How long a failed write keeps the store DOWN when no write succeeds meanwhile (there is no probe write). */
const WRITE_FAILURE_MEMORY_MS = 30_000;

/**
 * KurrentDB / EventStoreDB through `@kurrent/kurrentdb-client`, the maintained successor of
 * `@eventstore/db-client` (same protocol; the old package gets no new releases).
 * Positions are the commit positions of `$all`.
 */
// Required when the adapter is used, not at import: the client costs start-up time the embedded mode need not pay.
const kurrent = () => require('@kurrent/kurrentdb-client') as typeof import('@kurrent/kurrentdb-client');

/** The server cannot be reached (nothing was sent): a 503 for the request, not a 500. */
function unavailable(error: unknown): unknown {
  return error instanceof kurrent().UnavailableError
    ? new StoreUnavailableError('event store', (error as Error).message, { cause: error })
    : error;
}

/** A position in `$all`: (commit, prepare), ordered by commit, then prepare (the server's TFPos). */
interface Position {
  commit: bigint;
  prepare: bigint;
}

const PREPARE_BITS = 64n;
const PREPARE_MASK = (1n << PREPARE_BITS) - 1n;

/**
 * Our positions are one bigint holding both parts, ordered as `$all` is. Checked against the server's source
 * (KurrentDB 20.6 to 24.10 and main: StorageWriterService writes each event of an append as a self-committed prepare;
 * AllReader and IndexCommitter give it the position (L, L) of its own record; an append's answer is its last event's
 * (L, L)): for appends over gRPC the commit position alone is exact. Events of an explicit transaction (the legacy
 * TCP API) share the commit position of their commit record with prepare positions below it: there the commit position
 * alone named none of them, and a resume from (c, c) skipped the rest of a transaction stopped half-way. Both parts
 * make every position exact, whatever wrote the event; a subscription resumes from exactly the last one handled
 * (exclusive on the server since 24.2, and on an exact position before it).
 */
export function encodePosition({ commit, prepare }: Position): bigint {
  return (commit << PREPARE_BITS) | (prepare & PREPARE_MASK);
}

/** A checkpoint stored before positions held the prepare part (below 2^64) is a commit position: resumed as (c, c). */
export function decodePosition(position: bigint): Position {
  if (position <= PREPARE_MASK) return { commit: position, prepare: position };
  return { commit: position >> PREPARE_BITS, prepare: position & PREPARE_MASK };
}

/** Pauses before the n-th attempt to subscribe again: doubling from 100 ms up to 30 s, with jitter. */
const RESUBSCRIBE_BACKOFF = { baseMs: 100, maxMs: 30_000 };

export class EsdbEventStore implements EventStore {
  private readonly client: KurrentDBClient;
  /** Told of every failure or end of a subscription's stream before it subscribes again (logging, tests). */
  onSubscriptionProblem?: (error: unknown, attempt: number) => void;
  private readonly subscriptions = new Set<Subscription>();
  /** The last append or deletion the server refused or failed (disk full...): DOWN until a write succeeds, or for 30 s. */
  private readonly writeFailures = new LastWriteFailure(WRITE_FAILURE_MEMORY_MS);

  /** A connection string, or a client of the caller's (tests give a stand-in). */
  constructor(connection: string | KurrentDBClient) {
    this.client = typeof connection === 'string' ? kurrent().KurrentDBClient.connectionString(connection) : connection;
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StreamRead> {
    const { START, StreamNotFoundError } = kurrent();
    const events: RecordedEvent[] = [];
    const from = options.fromRevision ?? 0;
    try {
      for await (const resolved of this.client.readStream(streamId, {
        fromRevision: from > 0 ? BigInt(from) : START,
        direction: 'forwards',
      })) {
        const recorded = toRecorded(resolved);
        if (recorded) events.push(recorded);
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return { revision: -1, events: [] };
      throw unavailable(error);
    }
    // Nothing from `from` on: the stream ends just before it (it exists, or a read from 0 would have thrown).
    return { revision: events.length ? events[events.length - 1].revision : from - 1, events };
  }

  async appendToStream(streamId: string, events: EventToAppend[], options: { expectedRevision: ExpectedRevision }): Promise<AppendResult> {
    const { ANY, NO_STREAM, WrongExpectedVersionError, jsonEvent } = kurrent();
    const expected = options.expectedRevision;
    try {
      const result = await this.client.appendToStream(
        streamId,
        events.map((e) => jsonEvent({ id: e.id, type: e.type, data: e.data, metadata: e.metadata ?? {} })),
        { streamState: expected === 'any' ? ANY : expected === 'no_stream' ? NO_STREAM : BigInt(expected) },
      );
      this.writeFailures.succeeded();
      return { nextRevision: Number(result.nextExpectedRevision), position: result.position ? encodePosition(result.position) : 0n };
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        const actual = typeof error.actualState === 'bigint' ? Number(error.actualState) : -1;
        throw new WrongExpectedRevisionError(streamId, expected, actual);
      }
      // The server refused the write (a server that cannot be reached is seen by the ping itself).
      if (!(error instanceof kurrent().UnavailableError)) this.writeFailures.failed(error);
      throw unavailable(error);
    }
  }

  /**
   * A soft delete, not a tombstone: a tombstoned stream can never be written again, but an erased user who comes
   * back must start afresh under the same stream name. Reads then find nothing and an append with `no_stream`
   * recreates the stream (its revisions continue after the old ones). The old events stay in the server's
   * files until the next scavenge (so do a tombstone's): operators schedule scavenges (docs/erasure.md). Until
   * then `$all` still holds them, so `subscribe` skips every event below its stream's truncate-before.
   */
  async deleteStream(streamId: string): Promise<void> {
    const { StreamNotFoundError } = kurrent();
    try {
      await this.client.deleteStream(streamId);
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
  }

  /** A filtered read of `$all` (the server scans its log): erasure is rare, and no index by prefix exists. */
  async listStreams(prefix: string): Promise<string[]> {
    const { START, streamNameFilter } = kurrent();
    const seen = new Set<string>();
    for await (const resolved of this.client.readAll({ fromPosition: START, filter: streamNameFilter({ prefixes: [prefix] }) })) {
      const id = resolved.event?.streamId;
      if (id && id.startsWith(prefix)) seen.add(id);
    }
    const existing: string[] = [];
    for (const id of seen) if ((await this.readStream(id)).revision >= 0) existing.push(id);
    return existing;
  }

  /** Events below this revision were deleted (soft delete sets the stream's truncate-before); 0 when none. */
  private async truncatedBefore(streamId: string): Promise<number> {
    try {
      const { metadata } = await this.client.getStreamMetadata(streamId);
      // A soft-deleted stream not yet written again has its truncate-before at the end (or at the highest number).
      const tb = metadata?.truncateBefore;
      if (tb === undefined || tb === kurrent().START) return 0;
      return tb === kurrent().END ? Number.MAX_SAFE_INTEGER : Number(tb);
    } catch (error) {
      if (error instanceof kurrent().StreamNotFoundError) return 0;
      throw error;
    }
  }

  /**
   * A catch-up subscription to `$all` that recovers: when the server's stream fails or ends (a leader election, a
   * dropped connection), it subscribes again from the last event handled, after a capped, jittered pause, for as long
   * as it is not stopped. A handler that throws stops it (as the port says); `caughtUp` then reports the error.
   */
  subscribe(options: SubscriptionOptions, handler: EventHandler): Subscription {
    const { START, streamNameFilter } = kurrent();
    const filter = streamNameFilter({ prefixes: options.streamPrefixes });
    // Truncate-before by stream, read once per stream per subscription: only a replay (a new subscription from
    // an older position) can meet deleted events, and a new subscription reads the metadata afresh.
    const truncated = new LRUCache<string, number>({ max: 10_000 });
    const isDeleted = async (event: RecordedEvent) => {
      let tb = truncated.get(event.streamId);
      if (tb === undefined) {
        tb = await this.truncatedBefore(event.streamId);
        truncated.set(event.streamId, tb);
      }
      return event.revision < tb;
    };
    // The full position (commit, prepare) of the last event handled: where a new subscription resumes.
    let handled: Position | undefined = options.fromPosition === undefined ? undefined : decodePosition(options.fromPosition);
    let stopped = false;
    let failure: unknown = null;
    let caughtUp = false;
    let current: { unsubscribe(): Promise<void> } | null = null;
    let wake: (() => void) | null = null;
    const caughtUpWaiters: Array<() => void> = [];
    const settle = () => caughtUpWaiters.splice(0).forEach((resolve) => resolve());
    const consuming = (async () => {
      for (let attempt = 0; !stopped;) {
        const stream = this.client.subscribeToAll({ fromPosition: handled ?? START, filter });
        current = stream;
        stream.on('caughtUp', () => {
          caughtUp = true;
          settle();
        });
        try {
          for await (const resolved of stream) {
            // Events the client had buffered before a stop are not handed over.
            if (stopped) break;
            const recorded = toRecorded(resolved);
            if (!recorded || !options.streamPrefixes.some((p) => recorded.streamId.startsWith(p))) continue;
            // A failed metadata read is the server's (subscribed again, below), not the handler's.
            const deleted = await isDeleted(recorded);
            try {
              if (!deleted) await handler(recorded);
            } catch (error) {
              failure = error;
              stopped = true;
              settle();
              await stream.unsubscribe().catch(() => undefined);
              return;
            }
            if (resolved.event?.position) handled = resolved.event.position;
            attempt = 0;
          }
          if (stopped) return;
          this.onSubscriptionProblem?.(new Error('the server ended the subscription'), attempt + 1);
        } catch (error) {
          if (stopped) return;
          this.onSubscriptionProblem?.(error, attempt + 1);
        }
        attempt++;
        caughtUp = false;
        await stream.unsubscribe().catch(() => undefined);
        if (stopped) return;
        let pause: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => {
          wake = resolve;
          pause = setTimeout(resolve, backoffDelayMs(attempt, RESUBSCRIBE_BACKOFF));
        });
        clearTimeout(pause);
        wake = null;
      }
    })();
    const subscription: Subscription = {
      caughtUp: async () => {
        if (!caughtUp && !stopped) await new Promise<void>((resolve) => caughtUpWaiters.push(resolve));
        if (failure) throw failure;
      },
      backlog: async (limit) => {
        // A filtered read of `$all` from the last handled event, bounded by `limit` (the event at that position
        // itself comes back first and is not counted).
        let events = 0;
        let oldestCreatedAt: number | undefined;
        const at = handled;
        for await (const resolved of this.client.readAll({ fromPosition: at ?? START, maxCount: limit + 1, filter })) {
          const recorded = toRecorded(resolved);
          const position = resolved.event?.position;
          if (!recorded || (at && position && position.commit === at.commit && position.prepare === at.prepare)) continue;
          if (events === limit) break;
          events++;
          oldestCreatedAt ??= recorded.createdAt;
        }
        return { events, oldestCreatedAt };
      },
      stop: async () => {
        this.subscriptions.delete(subscription);
        stopped = true;
        settle();
        (wake as (() => void) | null)?.();
        await (current as { unsubscribe(): Promise<void> } | null)?.unsubscribe().catch(() => undefined);
        await consuming;
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** Up when the server answers a read and the last write (within 30 s) did not fail. */
  async ping(): Promise<boolean> {
    if (this.writeFailures.current() !== null) return false;
    try {
      await this.readStream('$udp-ping');
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    for (const s of [...this.subscriptions]) await s.stop();
    await this.client.dispose();
  }
}

function toRecorded(resolved: ResolvedEvent): RecordedEvent | null {
  const e = resolved.event;
  if (!e || e.streamId.startsWith('$') || e.type.startsWith('$')) return null;
  return {
    id: e.id,
    streamId: e.streamId,
    revision: Number(e.revision),
    position: e.position ? encodePosition(e.position) : (resolved.commitPosition ?? 0n) << 64n,
    type: e.type,
    data: (e.data ?? {}) as Record<string, unknown>,
    metadata: (e.metadata ?? {}) as Record<string, unknown>,
    createdAt: e.created instanceof Date ? e.created.getTime() : Number(e.created ?? 0),
  };
}
