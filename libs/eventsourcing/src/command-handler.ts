import { randomUUID } from 'node:crypto';
import {
  type AppendResult,
  type EventStore,
  type EventToAppend,
  type RecordedEvent,
  type StreamRead,
  EPOCH_MOVED,
  StoreUnavailableError,
  WrongExpectedRevisionError,
} from '@udp/eventstore';
import { timeSlices } from '@udp/retry';
import { METRICS, recordHistogram } from '@udp/telemetry';
import { type Aggregate, type AggregateStream, domainEventOf } from './aggregate';
import { ConcurrencyConflictError } from './concurrency-conflict';
import type { Command, DomainEvent, Unstamped } from './decider';
import { type StartingState, type StateCache, startsAt } from './state-cache';
import { traceMetadata } from './trace-context';

/** What a service writes with: its store, and the projector whose read model must show a write before it is acknowledged. */
export interface WriteSide {
  store: EventStore;
  /** The service's own projector: a write is acknowledged once its read model shows it. */
  projector?: {
    waitFor(streamId: string, revision: number, timeoutMs: number, position?: bigint): Promise<boolean>;
    readonly service?: string;
  };
  /**
   * The service's own read-model rows, applied from the append itself (InlineProjector): the write is answered once
   * they are, with no wait on the asynchronous projector. Set instead of `projector` in the single-process mode.
   */
  inline?: {
    applyAppended(events: RecordedEvent[]): Promise<void>;
    /** The application of the stream's appends under way, if any (InlineProjector.applying). */
    applying?(streamId: string): Promise<void> | null;
    readonly service?: string;
  };
  /**
   * (With `inline`) The asynchronous projectors of what users share (trending). An append of `PACED_APPEND_EVENTS`
   * events or more is answered once they have applied it too (bounded like the rest): the user who brings a batch of
   * work waits for it, not the others, and no user can pile up a backlog faster than it is applied (an erasure waits
   * for that backlog).
   */
  paced?: Array<NonNullable<WriteSide['projector']>>;
  readYourWritesTimeoutMs: number;
  onSlowProjection?: (streamId: string, revision: number) => void;
  /** Throws StoreUnavailableError while a store the write needs besides the event store is down. */
  ready?: () => Promise<void>;
}

/** What the write gate needs of a store: the ports' `ping`. */
export interface Pingable {
  ping(): Promise<boolean>;
}

/**
 * A gate that refuses writes (StoreUnavailableError, so 503) while `store` does not answer its ping: a write
 * appended then would be durable but invisible until the store is back, so the client is told to retry instead.
 * The answer is reused for `ttlMs` and one ping at a time is in flight, so load adds at most one ping a second;
 * a ping slower than `timeoutMs` counts as down (MongoDB's driver waits 5 s for a server that is gone).
 */
export function availabilityGate(part: string, store: Pingable, ttlMs = 1000, timeoutMs = 1000): () => Promise<void> {
  let last: { at: number; up: boolean } | null = null;
  let probing: Promise<void> | null = null;
  const probe = async () => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const up = await Promise.race([store.ping().catch(() => false), late]);
    clearTimeout(timer);
    last = { at: Date.now(), up };
    probing = null;
  };
  return async () => {
    if (!last || Date.now() - last.at > ttlMs) await (probing ??= probe());
    if (!last!.up) throw new StoreUnavailableError(part, 'it did not answer a ping');
  };
}

/** The little a library needs of a logger (pino's shape), so this package depends on none. */
export interface WarningLogger {
  warn(details: object, message: string): void;
}

export interface WriteSideOptions {
  store: EventStore;
  /** Absent: writes are acknowledged once durable (a worker whose writes no client reads back at once). */
  projector?: WriteSide['projector'];
  /** The own rows applied from the append (instead of waiting for `projector`). */
  inline?: WriteSide['inline'];
  /** (With `inline`) The shared projectors a large append waits for (`WriteSide.paced`). */
  paced?: WriteSide['paced'];
  readYourWritesTimeoutMs?: number;
  logger?: WarningLogger;
  /** The read-model store: writes are refused while it is down (they could not become visible). */
  readModels?: Pingable;
}

/** A service's write side: its store, its projector, the read-your-writes bound, slow projections logged. */
export function writeSide({
  store,
  projector,
  inline,
  paced,
  readYourWritesTimeoutMs = 5000,
  logger,
  readModels,
}: WriteSideOptions): WriteSide {
  return {
    store,
    projector,
    inline,
    paced,
    readYourWritesTimeoutMs,
    ready: readModels ? availabilityGate('read models', readModels) : undefined,
    onSlowProjection: (streamId, revision) =>
      logger?.warn({ streamId, revision }, 'read model late: acknowledged before it shows the write'),
  };
}

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

export interface CommandHandlerDeps<S, Id = unknown, E = unknown> {
  /** The store, and the projector whose read model shows a write before it is acknowledged (writeSide()). */
  write: WriteSide;
  /** The clock that stamps each command (deciders never read it). */
  now: () => number;
  /** Folded states in memory and as snapshots, so a write reads only newer events. */
  states?: StateCache<S>;
  /**
   * Runs before each append (every attempt), with what the command decided: it may refuse the command (throw) or
   * record something in another stream first, e.g. a per-user quota's claim when the aggregate is one stream per key.
   */
  beforeAppend?: BeforeAppend<Id, E, S>;
  /**
   * (Tests) One stream's commands run side by side, as on separate replicas, not one after another in this process:
   * how a test stages a race between writers in one process. Never set by a service.
   */
  sideBySide?: boolean;
}

/** What a command decided, before it is appended: the stream, the revision it was read at, the states before and after. */
export interface Decided<Id, E, S> {
  id: Id;
  streamId: string;
  /** The stream's revision as read (-1: no stream); the append expects it. */
  revision: number;
  state: S;
  newEvents: E[];
  newState: S;
}
export type BeforeAppend<Id, E, S> = (decided: Decided<Id, E, S>) => Promise<void>;

/** Runs one command on the stream of `id` (an `Unstamped` command: the handler stamps its time). */
export interface CommandHandler<C extends Command, E, S, Id> {
  (id: Id, command: Unstamped<C>): Promise<CommandResult<E, S>>;
  /**
   * (Inline read models) Settles once the rows of the appends to the stream of `id` being applied in this process are
   * all written; null when none is. A reader that must not see a part of an append (a clear, a batch) waits for it.
   */
  applying?(id: Id): Promise<void> | null;
}

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
  deps: CommandHandlerDeps<S, Id, E>,
): CommandHandler<C, E, S, Id> {
  const inTurn = deps.sideBySide
    ? <T>(_: string, work: () => Promise<T>) => work()
    : aggregate.whileWriting === 'refuse'
      ? refusedWhileWriting()
      : oneAtATimePerStream();
  const handle: CommandHandler<C, E, S, Id> = async (id, command) => {
    const stream = aggregate.streamOf(id);
    await deps.write.ready?.();
    // `Unstamped<C>` plus its metadata is a `C`; TypeScript cannot see it through the generic conditional type.
    const stamped = { ...command, metadata: { now: deps.now() } } as unknown as C;
    const decided = await inTurn(stream.id, () =>
      decideAndAppend(aggregate, deps.write, id, stream, stamped, deps.states, deps.beforeAppend),
    );
    const { applied, ...result } = decided;
    if (applied) {
      await waitUntilApplied(deps.write, stream.id, result, applied);
      if (result.newEvents.length >= PACED_APPEND_EVENTS) await waitForPacing(deps.write, stream.id, result);
    } else if (result.newEvents.length > 0) await waitUntilVisible(deps.write, stream.id, result);
    return result;
  };
  const { inline } = deps.write;
  if (inline?.applying) handle.applying = (id) => inline.applying!(aggregate.streamOf(id).id);
  return handle;
}

/**
 * Runs one stream's commands in this process one after another (read, decide, append; not the wait for the read
 * model after). Side by side, each decided on the same state and all but one lost the append's race, to be re-read
 * and re-decided, or refused past `conflictRetries`. Another process writing the same stream (the distributed mode's
 * replicas) still meets the append's revision check.
 */
function oneAtATimePerStream() {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(streamId: string, work: () => Promise<T>): Promise<T> => {
    const before = tails.get(streamId);
    const running = before ? before.then(work, work) : work();
    // Settles once `running` has, either way; the last of the stream's commands leaves nothing behind.
    const settled = () => {
      if (tails.get(streamId) === tail) tails.delete(streamId);
    };
    const tail: Promise<void> = running.then(settled, settled);
    tails.set(streamId, tail);
    return running;
  };
}

/**
 * Refuses a stream's command (429) while another of the stream is being decided and appended in this process. Before,
 * the second read, decided and appended, and lost the append's race only if the other's append came first: the same
 * 429 for more work, and none when it happened to read after.
 */
function refusedWhileWriting() {
  const writing = new Set<string>();
  return async <T>(streamId: string, work: () => Promise<T>): Promise<T> => {
    if (writing.has(streamId)) throw new ConcurrencyConflictError(streamId, 0);
    writing.add(streamId);
    try {
      return await work();
    } finally {
      writing.delete(streamId);
    }
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
  return foldRecorded(aggregate, stream, events, aggregate.decider.initialState());
}

/** Folds stored events onto `from`, each checked to be the stream owner's and parsed by the aggregate's schema. */
function foldRecorded<E extends DomainEvent, S>(
  aggregate: Pick<Aggregate<never, E, S, unknown>, 'decider' | 'events'>,
  stream: AggregateStream,
  recorded: readonly RecordedEvent[],
  from: S,
): S {
  return aggregate.decider.fold(
    recorded.map((event) => domainEventOf(aggregate, event, stream.owner)),
    from,
  );
}

async function decideAndAppend<C extends Command, E extends DomainEvent, S, Id>(
  aggregate: Aggregate<C, E, S, Id>,
  write: WriteSide,
  id: Id,
  stream: AggregateStream,
  command: C,
  states: StateCache<S> | undefined,
  beforeAppend: BeforeAppend<Id, E, S> | undefined,
): Promise<CommandResult<E, S> & { applied?: Promise<void> }> {
  const { decider } = aggregate;
  const { store } = write;
  const { slice } = timeSlices();
  // Once a decision without a read was refused, the stream is read on every attempt.
  let mustRead = false;
  for (let attempt = 1; ; attempt++) {
    // Taken before anything is read (`EventStore.writeEpoch`).
    const epoch = store.writeEpoch?.();
    let start: StartingState<S> | undefined = await states?.load(stream.id);
    let read: StreamRead;
    let recorded: readonly RecordedEvent[];
    const unread = !mustRead && start !== undefined && 'epoch' in start && start.epoch !== undefined && start.epoch === epoch;
    if (unread && start) {
      // Folded up to an append of this epoch, and every later append of this store to the stream would have moved
      // its revision (the append's check): this is the stream's state, no read needed.
      read = { revision: start.revision, events: [] };
      recorded = [];
    } else {
      read = await store.readStream(stream.id, start ? { fromRevision: start.revision } : undefined);
      if (start && !startsAt(start, read.events[0])) {
        // The stream was erased and written again: its remembered state and snapshot are of another stream.
        await states?.forget(stream.id);
        start = undefined;
        read = await store.readStream(stream.id);
      }
      recorded = start ? read.events.slice(1) : read.events;
    }
    const state = foldRecorded(aggregate, stream, recorded, start ? start.state : decider.initialState());
    const newEvents = decider.decide(command, state);
    if (newEvents.length === 0) {
      const lastEventId = read.events.at(-1)?.id;
      if (lastEventId) await states?.remember(stream.id, { revision: read.revision, lastEventId, state });
      return { newEvents, newState: state, nextExpectedRevision: read.revision };
    }
    const newState = decider.fold(newEvents, state);
    // A long command (a batch of 5,000 entries) has decided and folded for a while: other requests go first.
    await slice();
    await beforeAppend?.({ id, streamId: stream.id, revision: read.revision, state, newEvents, newState });
    const trace = traceMetadata();
    const metadata = stream.owner || trace ? { ...trace, ...(stream.owner && { owner: stream.owner }) } : undefined;
    const toAppend = newEvents.map((e) => ({ id: randomUUID(), type: e.type, data: { ...e.data }, ...(metadata && { metadata }) }));
    let appended: AppendResult;
    try {
      appended = await store.appendToStream(stream.id, toAppend, {
        expectedRevision: read.revision === -1 ? 'no_stream' : read.revision,
        // Without a read, the state must still be the stream's: refused if anything but this store's appends came since.
        ...(unread && { unchangedSinceEpoch: epoch }),
      });
    } catch (error) {
      states?.drop(stream.id);
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      // Decided without a read, and the store changed since by another writer or an erasure: not a race, so not one of
      // the retries. A revision that moved is a race as after a read (this store's appends all pass here).
      if (unread && error.reason === EPOCH_MOVED) {
        mustRead = true;
        attempt--;
      } else if (attempt > aggregate.conflictRetries) throw new ConcurrencyConflictError(stream.id, attempt);
      continue;
    }
    // Durable from here: the own rows are applied (handed over before any other await, so in store order), the
    // state is remembered (a snapshot that cannot be saved is only logged) and answered.
    const applied = write.inline && applyInline(write.inline, store, stream.id, read.revision + 1, toAppend, appended);
    // Failing only while the service stops; awaited (and answered) by the handler unless the line below throws first.
    applied?.catch(() => undefined);
    // The epoch unmoved from before the read to the append: nothing but this store's appends came between, and the
    // append's revision check says none of them to this stream. The next write may then decide without a read.
    const current = epoch !== undefined && appended.epoch === epoch;
    const after = { revision: appended.nextRevision, lastEventId: toAppend.at(-1)!.id, state: newState, ...(current && { epoch }) };
    await states?.remember(stream.id, after, { fromRevision: read.revision, folded: recorded.length + newEvents.length });
    return { newEvents, newState, nextExpectedRevision: appended.nextRevision, position: appended.position, applied };
  }
}

/**
 * The appended events as the store recorded them, handed to the inline projection. A store that does not say where
 * it put each event (an append retried after it was stored) is read back instead.
 */
function applyInline(
  inline: NonNullable<WriteSide['inline']>,
  store: EventStore,
  streamId: string,
  firstRevision: number,
  appended: EventToAppend[],
  result: AppendResult,
): Promise<void> {
  const stored = result.stored;
  if (!stored || stored.positions.length !== appended.length) {
    return store.readStream(streamId, { fromRevision: firstRevision }).then(({ events }) => inline.applyAppended(events));
  }
  return inline.applyAppended(
    appended.map((event, i) => ({
      id: event.id,
      streamId,
      revision: firstRevision + i,
      position: stored.positions[i],
      type: event.type,
      data: event.data,
      metadata: event.metadata ?? {},
      createdAt: stored.createdAt,
    })),
  );
}

/** An append of this many events or more waits for the shared projectors too (`WriteSide.paced`): a batch, not a write. */
export const PACED_APPEND_EVENTS = 100;

/** Waits (bounded by the read-your-writes timeout, together) for the shared projectors to apply a large append. */
async function waitForPacing(write: WriteSide, streamId: string, result: CommandResult<unknown, unknown>): Promise<void> {
  const until = performance.now() + write.readYourWritesTimeoutMs;
  for (const projector of write.paced ?? []) {
    const left = until - performance.now();
    if (left <= 0) return;
    await projector.waitFor(streamId, result.nextExpectedRevision, left, result.position);
  }
}

/** Waits (bounded) for the inline projection to apply the write; a late one is logged, the write acknowledged. */
async function waitUntilApplied(write: WriteSide, streamId: string, result: CommandResult<unknown, unknown>, applied: Promise<void>) {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), write.readYourWritesTimeoutMs);
  });
  const waiting = performance.now();
  const visible = await Promise.race([applied.then(() => true), late]);
  clearTimeout(timer);
  recordHistogram(METRICS.readYourWritesWait, (performance.now() - waiting) / 1000, {
    'udp.service': write.inline?.service ?? 'unknown',
    'udp.visible': visible,
  });
  if (!visible) write.onSlowProjection?.(streamId, result.nextExpectedRevision);
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
