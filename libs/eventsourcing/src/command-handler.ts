import { randomUUID } from 'node:crypto';
import { type EventStore, type RecordedEvent, WrongExpectedRevisionError } from '@udp/eventstore';
import { METRICS, recordHistogram } from '@udp/telemetry';
import { type Aggregate, domainEventOf } from './aggregate';
import { ConcurrencyConflictError } from './concurrency-conflict';
import type { Command, DomainEvent, Unstamped } from './decider';
import type { CachedState, StateCache } from './state-cache';
import { traceMetadata } from './trace-context';
import type { WriteSide } from './write-side';

/** What a command did: the events it appended, the state they left, and the revision the next write expects. */
export interface CommandResult<E, S> {
  /** The events appended (none when the command changed nothing). */
  newEvents: E[];
  newState: S;
  /** The stream's revision after the append (or as read when nothing was appended; -1: no stream). */
  nextExpectedRevision: number;
  /** The store position of the last event appended (absent when nothing was). */
  position?: bigint;
}

export interface CommandHandlerDeps<S> {
  /** The store, and the projector whose read model shows a write before it is acknowledged (writeSide()). */
  write: WriteSide;
  /** The clock that stamps each command (deciders never read it). */
  now: () => number;
  /** Folded states in memory and as snapshots, so a write reads only newer events. */
  states?: StateCache<S>;
}

/** Runs one command on the stream of `id` (an `Unstamped` command: the handler stamps its time). */
export type CommandHandler<C extends Command, E, S, Id> = (id: Id, command: Unstamped<C>) => Promise<CommandResult<E, S>>;

/**
 * The one command handler, set up once per aggregate: read the stream (from the remembered state on), fold it,
 * `decide`, append with the revision read, and wait (bounded) until the service's read model shows the events
 * ("read your writes"). A conflicting append is re-read and re-decided `aggregate.conflictRetries` times.
 *
 * A remembered state is a starting point only while the stream still holds the event it was folded up to
 * (checked by id); otherwise the whole stream is read. Each event read must belong to the stream's owner and
 * parse by the aggregate's schema; each event appended records the owner.
 */
export function commandHandler<C extends Command, E extends DomainEvent, S, Id>(
  aggregate: Aggregate<C, E, S, Id>,
  deps: CommandHandlerDeps<S>,
): CommandHandler<C, E, S, Id> {
  return async (id, command) => {
    const stream = aggregate.streamOf(id);
    await deps.write.ready?.();
    // `Unstamped<C>` plus its metadata is a `C`; TypeScript cannot see it through the generic conditional type.
    const stamped = { ...command, metadata: { now: deps.now() } } as unknown as C;
    const result = await decideAndAppend(aggregate, deps.write.store, stream, stamped, deps.states);
    if (result.newEvents.length > 0) await waitUntilVisible(deps.write, stream.id, result);
    return result;
  };
}

/** The state of the stream of `id` as it is stored now, without a command (a check before a batch of writes). */
export async function currentState<E extends DomainEvent, S, Id>(
  aggregate: Aggregate<never, E, S, Id>,
  store: EventStore,
  id: Id,
): Promise<S> {
  const stream = aggregate.streamOf(id);
  const { events } = await store.readStream(stream.id);
  return aggregate.decider.fold(
    events.map((recorded) => domainEventOf(aggregate, recorded, stream.owner)),
    aggregate.decider.initialState(),
  );
}

async function decideAndAppend<C extends Command, E extends DomainEvent, S, Id>(
  aggregate: Aggregate<C, E, S, Id>,
  store: EventStore,
  stream: { id: string; owner?: Readonly<Record<string, string>> },
  command: C,
  states: StateCache<S> | undefined,
): Promise<CommandResult<E, S>> {
  const { decider } = aggregate;
  const toDomain = (recorded: RecordedEvent) => domainEventOf(aggregate, recorded, stream.owner);
  for (let attempt = 1; ; attempt++) {
    let start: CachedState<S> | undefined = await states?.load(stream.id);
    let read = await store.readStream(stream.id, start ? { fromRevision: start.revision } : undefined);
    if (start && read.events[0]?.id !== start.lastEventId) {
      states?.drop(stream.id);
      start = undefined;
      read = await store.readStream(stream.id);
    }
    const recorded = start ? read.events.slice(1) : read.events;
    const state = decider.fold(recorded.map(toDomain), start ? start.state : decider.initialState());
    const newEvents = decider.decide(command, state);
    if (newEvents.length === 0) {
      const lastEventId = read.events.at(-1)?.id;
      if (lastEventId) await states?.remember(stream.id, { revision: read.revision, lastEventId, state });
      return { newEvents, newState: state, nextExpectedRevision: read.revision };
    }
    const trace = traceMetadata();
    const metadata = stream.owner || trace ? { ...trace, ...(stream.owner && { owner: stream.owner }) } : undefined;
    const toAppend = newEvents.map((e) => ({ id: randomUUID(), type: e.type, data: { ...e.data }, ...(metadata && { metadata }) }));
    try {
      const appended = await store.appendToStream(stream.id, toAppend, {
        expectedRevision: read.revision === -1 ? 'no_stream' : read.revision,
      });
      const newState = decider.fold(newEvents, state);
      const after = { revision: appended.nextRevision, lastEventId: toAppend.at(-1)!.id, state: newState };
      await states?.remember(stream.id, after, { fromRevision: read.revision, folded: recorded.length + newEvents.length });
      return { newEvents, newState, nextExpectedRevision: appended.nextRevision, position: appended.position };
    } catch (error) {
      states?.drop(stream.id);
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      if (attempt > aggregate.conflictRetries) throw new ConcurrencyConflictError(stream.id, attempt);
    }
  }
}

/** Waits (bounded) for the service's read model to show the write; a late one is logged, the write acknowledged. */
async function waitUntilVisible(write: WriteSide, streamId: string, result: CommandResult<unknown, unknown>): Promise<void> {
  if (!write.projector) return;
  const waiting = performance.now();
  const visible = await write.projector.waitFor(streamId, result.nextExpectedRevision, write.readYourWritesTimeoutMs, result.position);
  recordHistogram(METRICS.readYourWritesWait, (performance.now() - waiting) / 1000, {
    'udp.service': write.projector.service ?? 'unknown',
    'udp.visible': visible,
  });
  // The events are durable either way; a late projection only delays visibility, so we still acknowledge.
  if (!visible) write.onSlowProjection?.(streamId, result.nextExpectedRevision);
}
