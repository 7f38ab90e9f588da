import { LRUCache } from 'lru-cache';
import { nextTurn } from '@udp/retry';
import type { SnapshotStore } from '@udp/eventstore';
import type { WarningLogger } from './command-handler';

/** A folded state of a stream, and which event it was folded up to. */
export interface CachedState<S> {
  revision: number;
  /** Id of the event at `revision`: a stream erased and written again is told apart by it. */
  lastEventId: string;
  state: S;
  /** The store's write epoch of the append that left this state (`EventStore.writeEpoch`); never in a snapshot. */
  epoch?: number;
}

/** How an aggregate's state is written to and read from a snapshot. */
export interface SnapshotCodec<S> {
  /** Raise it whenever the encoded shape or the meaning of the state changes: older snapshots are then ignored. */
  version: number;
  encode(state: S): unknown;
  decode(encoded: unknown): S;
}

/**
 * A state made from the service's own read-model rows (`StateCacheOptions.fromRows`): the rows show every event up to
 * `revision`, whose store position was `position` (a stream erased and begun again is told apart by it), and may show
 * some after it; the write reads and folds the events after `revision`, which a decider's fold must allow (history's
 * events set what they change, so folding one the rows already show again changes nothing).
 */
export interface StateFromRows<S> {
  revision: number;
  position: bigint;
  state: S;
}

/** Where a write starts: a state folded here (or its snapshot), or one made from the own rows. */
export type StartingState<S> = CachedState<S> | StateFromRows<S>;

/** Whether `event` (the stream's event at the start's revision, as read now) is the one the start was folded up to. */
export function startsAt<S>(start: StartingState<S>, event: { id: string; position: bigint } | undefined): boolean {
  if (!event) return false;
  return 'lastEventId' in start ? event.id === start.lastEventId : event.position === start.position;
}

export interface StateCacheOptions<S> {
  /** How many streams' states are kept in memory (least recently used dropped first). */
  maxStreams: number;
  /** Saved states: a stream not in memory is read from its snapshot on; one is saved every `every` events. */
  snapshots?: { store: SnapshotStore; codec: SnapshotCodec<S>; every: number };
  /**
   * A stream in neither: its state made from the service's own read-model rows, if it has any (history: a user's
   * entries are the state). A cold user's write then reads one row per entry from an index, not every event of the
   * stream with its schema check and fold (docs/performance.md, "Cold users").
   */
  fromRows?: (streamId: string) => Promise<StateFromRows<S> | undefined>;
  /** A failed snapshot only makes later reads longer: it is logged, never fails the write. */
  logger?: WarningLogger;
}

/**
 * The folded states of an aggregate's streams, so a write reads only the events after the one its state was
 * folded up to instead of the whole stream (years of history would otherwise be re-read on every write): the
 * recently written streams in memory, and, when a snapshot store is given, every stream's latest snapshot.
 * Safe for every decider: `Decider.fold` never changes the state it folds from.
 */
export class StateCache<S> {
  private readonly inMemory: LRUCache<string, CachedState<S>>;

  constructor(private readonly options: StateCacheOptions<S>) {
    this.inMemory = new LRUCache({ max: options.maxStreams });
  }

  /**
   * Where a write on the stream may start: its state in memory, else its snapshot, else its own rows, else nothing
   * (fold it all).
   */
  async load(streamId: string): Promise<StartingState<S> | undefined> {
    return this.inMemory.get(streamId) ?? (await this.readSnapshot(streamId)) ?? (await this.readRows(streamId));
  }

  /**
   * Keeps the state a write left; saves it as a snapshot when the write crossed a multiple of `every` revisions or
   * had to fold `folded` >= `every` events (a long stream without a snapshot).
   */
  async remember(streamId: string, at: CachedState<S>, write?: { fromRevision: number; folded: number }): Promise<void> {
    this.inMemory.set(streamId, at);
    const snapshots = this.options.snapshots;
    if (!snapshots || !write) return;
    const { every } = snapshots;
    const due = write.folded >= every || Math.floor((at.revision + 1) / every) > Math.floor((write.fromRevision + 1) / every);
    if (!due) return;
    // A turn of its own: the snapshot of a long history (several ms to encode and write) does not lengthen the
    // turn that stored a batch. Written only if the state is still the one in memory: erased meanwhile (`forget`),
    // it must not come back, and a newer one will be saved in its turn.
    await nextTurn();
    if (this.inMemory.peek(streamId) === at) await this.saveSnapshot(streamId, at);
  }

  /** Drops the stream's state from memory and its snapshot (an erased user's data must not outlive the erasure). */
  async forget(streamId: string): Promise<void> {
    this.inMemory.delete(streamId);
    await this.options.snapshots?.store.delete(streamId);
  }

  /** Drops the state from memory only (a write that failed: the stream may have moved on). */
  drop(streamId: string): void {
    this.inMemory.delete(streamId);
  }

  /** On a clean stop: a snapshot of every state in memory newer than its stream's snapshot. Returns how many. */
  async flush(): Promise<number> {
    const snapshots = this.options.snapshots;
    if (!snapshots) return 0;
    let written = 0;
    for (const streamId of [...this.inMemory.rkeys()]) {
      const at = this.inMemory.peek(streamId);
      if (!at) continue;
      const stored = await snapshots.store.read(streamId);
      if (stored?.version === snapshots.codec.version && stored.revision >= at.revision) continue;
      // Forgotten meanwhile (its user erased): not written back.
      if (this.inMemory.peek(streamId) !== at) continue;
      await this.saveSnapshot(streamId, at);
      written++;
    }
    return written;
  }

  /** The streams in memory, least recently used first. */
  streamsInMemory(): string[] {
    return [...this.inMemory.rkeys()];
  }

  /** The snapshot as a starting state; none when absent, of another codec version, or unreadable (logged). */
  private async readSnapshot(streamId: string): Promise<CachedState<S> | undefined> {
    const snapshots = this.options.snapshots;
    if (!snapshots) return undefined;
    try {
      const stored = await snapshots.store.read(streamId);
      if (!stored || stored.version !== snapshots.codec.version) return undefined;
      return { revision: stored.revision, lastEventId: stored.lastEventId, state: snapshots.codec.decode(JSON.parse(stored.state)) };
    } catch (err) {
      this.options.logger?.warn({ streamId, err }, 'snapshot not read: folding the whole stream');
      return undefined;
    }
  }

  /** The state made from the own rows; none when there are none or they cannot be read (logged). */
  private async readRows(streamId: string): Promise<StateFromRows<S> | undefined> {
    try {
      return await this.options.fromRows?.(streamId);
    } catch (err) {
      this.options.logger?.warn({ streamId, err }, 'state not made from the read model: folding the whole stream');
      return undefined;
    }
  }

  private async saveSnapshot(streamId: string, at: CachedState<S>): Promise<void> {
    const { store, codec } = this.options.snapshots!;
    try {
      const state = JSON.stringify(codec.encode(at.state));
      await store.write(streamId, { version: codec.version, revision: at.revision, lastEventId: at.lastEventId, state });
    } catch (err) {
      this.options.logger?.warn({ streamId, err }, 'snapshot not saved');
    }
  }
}
