import { randomUUID } from 'node:crypto';
import { type EventStore, type RecordedEvent, WrongExpectedRevisionError } from '@udp/eventstore';
import { ConcurrencyConflictError } from './concurrency-conflict';
import type { Command, Decider, DomainEvent } from './decider';
import { type Snapshotting, loadSnapshot, saveSnapshot, snapshotDue } from './snapshots';
import type { CachedState, StreamStateCache } from './state-cache';
import { type OwnedStream, assertOwnedBy } from './streams';
import { traceMetadata } from './trace-context';

export interface HandledCommand<E, S> {
  /** The events appended (empty when the command changed nothing). */
  events: E[];
  /** The state the decision was taken on. */
  stateBefore: S;
  /** Revision of the stream after the append (or as read, when nothing was appended). */
  revision: number;
  /** The store position of the last event appended (absent when nothing was). */
  position?: bigint;
}

/** How a write goes: its retries on a conflict (history refuses at once, the spec's 429), and where it may start reading. */
export interface ConflictPolicy<S> {
  retries: number;
  /** Remembered states, so a write reads only newer events. */
  cache?: StreamStateCache<S>;
  /** Saved states, so a stream not in the cache is read from its snapshot on, and one every `every` events. */
  snapshots?: Snapshotting<S>;
}

/**
 * Read the stream, fold it with the decider, `decide`, append with the revision we read.
 * Written once here; every service's write side goes through it.
 *
 * A remembered state (the cache, else a snapshot) is a starting point only while the stream still holds the
 * event it was folded up to (checked by id); otherwise the whole stream is read.
 *
 * With an owned stream (every per-user aggregate), each event read must belong to the owner (else
 * `ForeignEventError`: nothing of it is returned or folded into a decision), and each event appended records it.
 */
export async function handleCommand<C extends Command, E extends DomainEvent, S>(
  store: EventStore,
  stream: string | OwnedStream,
  decider: Decider<C, E, S>,
  command: C | ((state: S) => C),
  policy: ConflictPolicy<S> = { retries: 0 },
): Promise<HandledCommand<E, S>> {
  const streamId = typeof stream === 'string' ? stream : stream.id;
  const owner = typeof stream === 'string' ? undefined : stream.owner;
  const { cache, snapshots } = policy;
  const toDomain = (r: RecordedEvent): E => {
    if (owner) assertOwnedBy(r, owner);
    return decider.upcast(r.type, r.data);
  };
  for (let attempt = 1; ; attempt++) {
    let start: CachedState<S> | undefined = cache?.get(streamId) ?? (snapshots && (await loadSnapshot(snapshots, streamId)));
    let read = await store.readStream(streamId, start ? { fromRevision: start.revision } : undefined);
    if (start && read.events[0]?.id !== start.lastEventId) {
      cache?.forget(streamId);
      start = undefined;
      read = await store.readStream(streamId);
    }
    const recorded = start ? read.events.slice(1) : read.events;
    const state = decider.fold(recorded.map(toDomain), start ? start.state : decider.initialState());
    const cmd = typeof command === 'function' ? command(state) : command;
    const events = decider.decide(cmd, state);
    if (events.length === 0) {
      const lastEventId = read.events[read.events.length - 1]?.id;
      if (lastEventId) cache?.set(streamId, { revision: read.revision, lastEventId, state });
      return { events, stateBefore: state, revision: read.revision };
    }
    const trace = traceMetadata();
    const metadata = owner || trace ? { ...trace, ...(owner && { owner }) } : undefined;
    const toAppend = events.map((e) => ({ id: randomUUID(), type: e.type, data: { ...e.data }, ...(metadata && { metadata }) }));
    try {
      const result = await store.appendToStream(streamId, toAppend, {
        expectedRevision: read.revision === -1 ? 'no_stream' : read.revision,
      });
      const after = { revision: result.nextRevision, lastEventId: toAppend[toAppend.length - 1].id, state: decider.fold(events, state) };
      cache?.set(streamId, after);
      if (snapshots && snapshotDue(snapshots.every, read.revision, result.nextRevision, recorded.length + events.length))
        await saveSnapshot(snapshots, streamId, after);
      return { events, stateBefore: state, revision: result.nextRevision, position: result.position };
    } catch (error) {
      cache?.forget(streamId);
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      if (attempt > policy.retries) throw new ConcurrencyConflictError(streamId, attempt);
    }
  }
}
