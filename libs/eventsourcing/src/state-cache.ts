/** A folded state remembered for a stream, and which event it was folded up to. */
export interface CachedState<S> {
  revision: number;
  /** Id of the event at `revision`: a stream erased and written again is told apart by it. */
  lastEventId: string;
  state: S;
}

/**
 * Folded states by stream, least recently used dropped first. A write then reads only the events after the
 * remembered revision instead of the whole stream (years of history would otherwise be re-read on every write).
 * Safe for every decider: `Decider.fold` never changes the state it folds from.
 */
export class StreamStateCache<S> {
  private readonly states = new Map<string, CachedState<S>>();

  constructor(private readonly maxStreams = 1000) {}

  get(streamId: string): CachedState<S> | undefined {
    const entry = this.states.get(streamId);
    if (entry) {
      this.states.delete(streamId);
      this.states.set(streamId, entry);
    }
    return entry;
  }

  set(streamId: string, entry: CachedState<S>): void {
    this.states.delete(streamId);
    this.states.set(streamId, entry);
    if (this.states.size > this.maxStreams) this.states.delete(this.states.keys().next().value!);
  }

  /** The remembered states, least recently used first. */
  entries(): IterableIterator<[string, CachedState<S>]> {
    return this.states.entries();
  }

  /** Drops the stream's state (an erased user's data must not outlive the erasure in memory). */
  forget(streamId: string): void {
    this.states.delete(streamId);
  }
}
