import type { SnapshotStore } from '@udp/eventstore';
import { type CachedState, StreamStateCache } from './state-cache';
import type { WarningLogger } from './write-side';

/** How an aggregate's state is written to and read from a snapshot. */
export interface SnapshotCodec<S> {
  /** Raise it whenever the encoded shape or the meaning of the state changes: older snapshots are then ignored. */
  version: number;
  encode(state: S): unknown;
  decode(encoded: unknown): S;
}

/** Snapshots of one aggregate: a write then reads at most about `every` events past the latest one. */
export interface Snapshotting<S> {
  store: SnapshotStore;
  codec: SnapshotCodec<S>;
  every: number;
  /** A failed snapshot only makes later reads longer: it is reported, never fails the write. */
  onError?: (streamId: string, error: unknown) => void;
}

/**
 * The stream's snapshot as a starting state, or undefined when there is none of the codec's version, or it cannot
 * be read or decoded (reported): the write then folds the whole stream, as it would without snapshots.
 */
export async function loadSnapshot<S>(snapshots: Snapshotting<S>, streamId: string): Promise<CachedState<S> | undefined> {
  try {
    const stored = await snapshots.store.read(streamId);
    if (!stored || stored.version !== snapshots.codec.version) return undefined;
    return { revision: stored.revision, lastEventId: stored.lastEventId, state: snapshots.codec.decode(JSON.parse(stored.state)) };
  } catch (error) {
    snapshots.onError?.(streamId, error);
    return undefined;
  }
}

export async function saveSnapshot<S>(snapshots: Snapshotting<S>, streamId: string, at: CachedState<S>): Promise<void> {
  try {
    const state = JSON.stringify(snapshots.codec.encode(at.state));
    await snapshots.store.write(streamId, { version: snapshots.codec.version, revision: at.revision, lastEventId: at.lastEventId, state });
  } catch (error) {
    snapshots.onError?.(streamId, error);
  }
}

/**
 * A snapshot is due when the write from revision `before` to `after` crossed a multiple of `every`, or when it
 * had to fold `folded` >= `every` events (a long stream without a snapshot, e.g. written before snapshots existed).
 */
export function snapshotDue(every: number, before: number, after: number, folded: number): boolean {
  return folded >= every || Math.floor((after + 1) / every) > Math.floor((before + 1) / every);
}

/** On a clean shutdown: a snapshot of every remembered state newer than its stream's snapshot. */
export async function snapshotCached<S>(snapshots: Snapshotting<S>, cache: StreamStateCache<S>): Promise<number> {
  let written = 0;
  for (const [streamId, entry] of cache.entries()) {
    const stored = await snapshots.store.read(streamId);
    if (stored?.version === snapshots.codec.version && stored.revision >= entry.revision) continue;
    await saveSnapshot(snapshots, streamId, entry);
    written++;
  }
  return written;
}

/** A write side's folded states: cached in memory, and snapshotted when a snapshot store is given. */
export interface FoldedStates<S> {
  cache: StreamStateCache<S>;
  snapshots?: Snapshotting<S>;
  /** Saves every cached state as a snapshot (at stop), when snapshots are on. */
  flush(): Promise<void>;
}

export interface FoldedStatesOptions<S> {
  /** How many streams' states are kept in memory (least recently used dropped). */
  cached: number;
  /** None: every write starts from the cache or the stream. */
  store?: SnapshotStore;
  codec: SnapshotCodec<S>;
  /** Events between two snapshots of a stream. */
  every: number;
  /** A failed save is logged as a warning. */
  logger: WarningLogger;
}

export function foldedStates<S>(options: FoldedStatesOptions<S>): FoldedStates<S> {
  const { store, codec, every, logger } = options;
  const cache = new StreamStateCache<S>(options.cached);
  const snapshots = store && {
    store,
    codec,
    every,
    onError: (streamId: string, err: unknown) => logger.warn({ streamId, err }, 'snapshot not saved'),
  };
  return {
    cache,
    snapshots,
    async flush() {
      if (snapshots) await snapshotCached(snapshots, cache);
    },
  };
}
