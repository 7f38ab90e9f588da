/** The event-store port: what every service's write side and projector needs from a store. */

export type ExpectedRevision = number | 'no_stream' | 'any';

export interface EventToAppend {
  /** Unique id of the event; appending the same ids again is a no-op (idempotent retries). */
  id: string;
  type: string;
  data: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

export interface RecordedEvent {
  id: string;
  streamId: string;
  /** 0-based position of the event in its stream. */
  revision: number;
  /** Global, strictly increasing position across all streams (opaque, ordered). */
  position: bigint;
  type: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  createdAt: number;
}

export interface StreamRead {
  /** Revision of the last event, or -1 when the stream does not exist. */
  revision: number;
  /** The events from `fromRevision` on (all of them by default). */
  events: RecordedEvent[];
}

export interface ReadStreamOptions {
  /** Read only events at this revision or later; `revision` still names the stream's last one. */
  fromRevision?: number;
}

export interface AppendResult {
  /** Revision of the last event now in the stream. */
  nextRevision: number;
  position: bigint;
  /**
   * Set by a store that knows them when this append stored its events now (not a retry of one already stored): each
   * event's position and when they were stored, so an inline projection applies them without reading them back.
   */
  stored?: { positions: bigint[]; createdAt: number };
  /** The store's write epoch this append was made in (`EventStore.writeEpoch`), from a store that keeps one. */
  epoch?: number;
}

export interface AppendOptions {
  expectedRevision: ExpectedRevision;
  /**
   * Refused, as a wrong expected revision, when the store's write epoch has moved from this one: something other
   * than this store object's appends changed the store meanwhile (`EventStore.writeEpoch`).
   */
  unchangedSinceEpoch?: number;
}

export interface SubscriptionOptions {
  /** Deliver events strictly after this position; undefined = from the start. */
  fromPosition?: bigint;
  /** Only streams whose id starts with one of these prefixes. */
  streamPrefixes: string[];
  /**
   * A hint from a replica that applies only some segments (libs/eventsourcing segments.ts, `segmentOf` with this
   * `count`): a store may then leave out events of streams in other segments, so each replica reads only its share.
   * Honoured by the PostgreSQL store (an indexed column; for prefixes with one `-`, at their end: postgres.ts
   * `segmentFilterApplies`); the others ignore it and deliver every event. The consumer still checks each event's
   * segment, and follows anew (a new subscription) when the segments it holds change.
   */
  segments?: { count: number; ids: number[] };
}

export type EventHandler = (event: RecordedEvent) => Promise<void>;

/** The events in hand, in store order (at most `max` of a subscription's streams): a projection applies them as one batch. */
export interface BatchHandler {
  max: number;
  handle(events: RecordedEvent[]): Promise<void>;
}

/** What a subscription has not handled yet. */
export interface Backlog {
  /** Events of its streams stored after the last one it handled, counted up to the limit asked for. */
  events: number;
  /** When the first of them was stored (ms since the epoch); undefined when there is none. */
  oldestCreatedAt?: number;
}

export interface Subscription {
  /** Resolves once every event stored before the call was handed to the handler. */
  caughtUp(): Promise<void>;
  /** What is stored and not handled yet (projection lag), counting at most `limit` events. */
  backlog(limit: number): Promise<Backlog>;
  stop(): Promise<void>;
}

export interface EventStore {
  readStream(streamId: string, options?: ReadStreamOptions): Promise<StreamRead>;
  appendToStream(streamId: string, events: EventToAppend[], options: AppendOptions): Promise<AppendResult>;
  /**
   * The write epoch, from a store that can tell: it stays the same while nothing but this store object's own appends
   * changes the store, and moves when another writer commits (another process on the same file) or a stream is
   * deleted. A state folded up to an append made in the epoch still current is the stream's state: a writer may
   * decide on it without reading the stream again, and append with `unchangedSinceEpoch` (refused if it moved since).
   */
  writeEpoch?(): number;
  /** The highest position the store has given (0 when none): every event appended later is after it. */
  highestPosition?(): bigint;
  /**
   * Removes the stream and its events (user-data erasure): reading it afterwards finds nothing, a new append
   * with `no_stream` starts it afresh, and no subscription delivers its old events again, even from the start.
   * Deleting a stream that does not exist is no error.
   */
  deleteStream(streamId: string): Promise<void>;
  /** Ids of the streams that exist (not deleted) and start with `prefix`, in no particular order. */
  listStreams(prefix: string): Promise<string[]>;
  /** Catch-up subscription to all streams matching the prefixes, in global order. Handler errors stop it. */
  subscribe(options: SubscriptionOptions, handler: EventHandler): Subscription;
  /**
   * The same subscription, the events read together handed over together: a projector then writes one checkpoint
   * (and a publisher produces once) per batch, not per event. A store without it: `subscribe`, one at a time.
   */
  subscribeBatches?(options: SubscriptionOptions, handler: BatchHandler): Subscription;
  /** True when the store answers. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** The expected revision did not match the stream's current revision. */
export class WrongExpectedRevisionError extends Error {
  override readonly name = 'WrongExpectedRevisionError';
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    readonly actual: number,
    /** Why, when the revisions alone do not say it (`EPOCH_MOVED`). */
    readonly reason?: string,
  ) {
    super(`stream ${streamId}: expected revision ${String(expected)}, actual ${actual}${reason ? ` (${reason})` : ''}`);
  }
}

/** Why an append with `unchangedSinceEpoch` was refused although its revision matched. */
export const EPOCH_MOVED = 'the store was changed by another writer or an erasure since';

export function revisionMatches(expected: ExpectedRevision, actual: number): boolean {
  if (expected === 'any') return true;
  if (expected === 'no_stream') return actual === -1;
  return expected === actual;
}

/**
 * A store a request needs cannot be used now (down, unreachable, its file gone): the HTTP layer answers 503
 * with Retry-After, naming `part`. Nothing was stored for the request that got it.
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  constructor(
    /** Which part: 'event store', 'read models', 'bus'. */
    readonly part: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${part} unavailable: ${detail}`, options);
  }
}
