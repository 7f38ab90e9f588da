import { type EventStore, StoreUnavailableError } from '@udp/eventstore';

/** What a service writes with: its store, and the projector whose read model must show a write before it is acknowledged. */
export interface WriteSide {
  store: EventStore;
  /** The service's own projector: a write is acknowledged once its read model shows it. */
  projector?: {
    waitFor(streamId: string, revision: number, timeoutMs: number, position?: bigint): Promise<boolean>;
    readonly service?: string;
  };
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
  readYourWritesTimeoutMs?: number;
  logger?: WarningLogger;
  /** The read-model store: writes are refused while it is down (they could not become visible). */
  readModels?: Pingable;
}

/** A service's write side: its store, its projector, the read-your-writes bound, slow projections logged. */
export function writeSide({ store, projector, readYourWritesTimeoutMs = 5000, logger, readModels }: WriteSideOptions): WriteSide {
  return {
    store,
    projector,
    readYourWritesTimeoutMs,
    ready: readModels ? availabilityGate('read models', readModels) : undefined,
    onSlowProjection: (streamId, revision) =>
      logger?.warn({ streamId, revision }, 'read model late: acknowledged before it shows the write'),
  };
}
