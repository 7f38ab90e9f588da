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
  for (let attempt = 1; ; attempt++) {
    const stream = await store.readStream(streamId);
    const past = stream.events.map((r) => (decider.upcast ? decider.upcast(r.type, r.data) : ({ type: r.type, data: r.data } as E)));
    const state = decider.fold ? decider.fold(past) : past.reduce(decider.evolve, decider.initialState());
    const cmd = typeof command === 'function' ? command(state) : command;
    const events = decider.decide(cmd, state);
    if (events.length === 0) return { events, stateBefore: state, revision: stream.revision };
    try {
      const result = await store.appendToStream(
        streamId,
        events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data as Record<string, unknown> })),
        { expectedRevision: stream.revision === -1 ? 'no_stream' : stream.revision },
      );
      return { events, stateBefore: state, revision: result.nextRevision };
    } catch (error) {
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
