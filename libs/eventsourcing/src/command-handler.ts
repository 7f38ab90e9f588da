import { randomUUID } from 'node:crypto';
import { type EventStore, WrongExpectedRevisionError } from '@udp/eventstore';
import type { Command, Decider, DomainEvent } from './decider';

export interface HandledCommand<E, S> {
  /** The events appended (empty when the command changed nothing). */
  events: E[];
  /** The state the decision was taken on. */
  stateBefore: S;
  /** Revision of the stream after the append (or as read, when nothing was appended). */
  revision: number;
}

/** The write path's retry policy: history refuses at once (the spec's 429), other aggregates retry a few times. */
export interface ConflictPolicy {
  retries: number;
  /** Remembered states, so a write reads only newer events (for deciders whose states are never mutated). */
  cache?: StreamStateCache<unknown>;
}

/**
 * Folded states by stream, least recently used dropped first. A write then reads only the events after the
 * remembered revision instead of the whole stream (years of history would otherwise be re-read on every write).
 * Only for deciders whose `decide` and `evolve` never mutate a state they are given.
 */
interface CachedState<S> {
  revision: number;
  /** Id of the event at `revision`: a stream erased and written again is told apart by it. */
  lastEventId: string;
  state: S;
}

export class StreamStateCache<S> {
  private readonly entries = new Map<string, CachedState<S>>();

  constructor(private readonly maxStreams = 1000) {}

  get(streamId: string): CachedState<S> | undefined {
    const entry = this.entries.get(streamId);
    if (entry) {
      this.entries.delete(streamId);
      this.entries.set(streamId, entry);
    }
    return entry;
  }

  set(streamId: string, entry: CachedState<S>): void {
    this.entries.delete(streamId);
    this.entries.set(streamId, entry);
    if (this.entries.size > this.maxStreams) this.entries.delete(this.entries.keys().next().value!);
  }

  forget(streamId: string): void {
    this.entries.delete(streamId);
  }
}

/** Thrown when the stream kept changing under us: the HTTP layer answers 429 with Retry-After. */
export class ConcurrencyConflictError extends Error {
  override readonly name = 'ConcurrencyConflictError';
  constructor(readonly streamId: string, readonly attempts: number) {
    super(`stream ${streamId} changed concurrently (${attempts} attempt(s))`);
  }
}

/**
 * Read the stream, fold it with `evolve`, `decide`, append with the revision we read.
 * Written once here; every service's write side goes through it.
 */
export async function handleCommand<C extends Command, E extends DomainEvent, S>(
  store: EventStore,
  streamId: string,
  decider: Decider<C, E, S>,
  command: C | ((state: S) => C),
  policy: ConflictPolicy = { retries: 0 },
): Promise<HandledCommand<E, S>> {
  const cache = policy.cache as StreamStateCache<S> | undefined;
  const foldOnto = (from: S | undefined, events: E[]) =>
    decider.fold ? decider.fold(events, from) : events.reduce(decider.evolve, from ?? decider.initialState());
  for (let attempt = 1; ; attempt++) {
    // With a remembered state, read from its own last event on: that event must still be the same one.
    let cached = cache?.get(streamId);
    let stream = await store.readStream(streamId, cached ? { fromRevision: cached.revision } : undefined);
    if (cached && stream.events[0]?.id !== cached.lastEventId) {
      cache!.forget(streamId);
      cached = undefined;
      stream = await store.readStream(streamId);
    }
    const recorded = cached ? stream.events.slice(1) : stream.events;
    const past = recorded.map((r) => (decider.upcast ? decider.upcast(r.type, r.data) : ({ type: r.type, data: r.data } as E)));
    const state = foldOnto(cached?.state, past);
    const lastEventId = stream.events[stream.events.length - 1]?.id;
    const cmd = typeof command === 'function' ? command(state) : command;
    const events = decider.decide(cmd, state);
    if (events.length === 0) {
      if (lastEventId) cache?.set(streamId, { revision: stream.revision, lastEventId, state });
      return { events, stateBefore: state, revision: stream.revision };
    }
    const toAppend = events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data as Record<string, unknown> }));
    try {
      const result = await store.appendToStream(streamId, toAppend, {
        expectedRevision: stream.revision === -1 ? 'no_stream' : stream.revision,
      });
      cache?.set(streamId, { revision: result.nextRevision, lastEventId: toAppend[toAppend.length - 1].id, state: foldOnto(state, events) });
      return { events, stateBefore: state, revision: result.nextRevision };
    } catch (error) {
      cache?.forget(streamId);
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      if (attempt > policy.retries) throw new ConcurrencyConflictError(streamId, attempt);
    }
  }
}

export interface WriteSide {
  store: EventStore;
  /** The service's own projector: a write is acknowledged once its read model shows it. */
  projector: { waitFor(streamId: string, revision: number, timeoutMs: number): Promise<boolean> };
  readYourWritesTimeoutMs: number;
  onSlowProjection?: (streamId: string, revision: number) => void;
}

/** The little a library needs of a logger (pino's shape), so this package depends on none. */
export interface WarningLogger {
  warn(details: object, message: string): void;
}

/** A service's write side: its store, its projector, the read-your-writes bound, slow projections logged. */
export function writeSide(store: EventStore, projector: WriteSide['projector'], readYourWritesTimeoutMs = 5000, logger?: WarningLogger): WriteSide {
  return {
    store,
    projector,
    readYourWritesTimeoutMs,
    onSlowProjection: (streamId, revision) => logger?.warn({ streamId, revision }, 'read model late: acknowledged before it shows the write'),
  };
}

/** `handleCommand`, then wait (bounded) until the service's read model shows the appended events. */
export async function handleCommandVisibly<C extends Command, E extends DomainEvent, S>(
  write: WriteSide,
  streamId: string,
  decider: Decider<C, E, S>,
  command: C | ((state: S) => C),
  policy?: ConflictPolicy,
): Promise<HandledCommand<E, S>> {
  const result = await handleCommand(write.store, streamId, decider, command, policy);
  if (result.events.length > 0) {
    const visible = await write.projector.waitFor(streamId, result.revision, write.readYourWritesTimeoutMs);
    // The events are durable either way; a late projection only delays visibility, so we still acknowledge.
    if (!visible) write.onSlowProjection?.(streamId, result.revision);
  }
  return result;
}
