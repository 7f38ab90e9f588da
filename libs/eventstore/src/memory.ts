import { randomUUID } from 'node:crypto';
import { PollingSubscription } from './polling-subscription';
import type { AppendOptions, AppendResult, EventStore, EventToAppend } from './port';
import type { BatchHandler, EventHandler, ReadStreamOptions, RecordedEvent, StreamRead, Subscription, SubscriptionOptions } from './port';
import { EPOCH_MOVED, WrongExpectedRevisionError, revisionMatches } from './port';

/** In-memory event store for tests. Same semantics as the durable adapters, nothing survives the process. */
export class MemoryEventStore implements EventStore {
  private readonly log: RecordedEvent[] = [];
  private readonly streams = new Map<string, RecordedEvent[]>();
  private readonly subscriptions = new Set<PollingSubscription>();
  private lastPosition = 0n;
  /** Moves when a stream is deleted: this object is the store's only writer. */
  private epoch = 0;

  writeEpoch(): number {
    return this.epoch;
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StreamRead> {
    const events = this.streams.get(streamId) ?? [];
    const from = options.fromRevision ?? 0;
    return { revision: events.length ? events[events.length - 1].revision : -1, events: events.filter((e) => e.revision >= from) };
  }

  async appendToStream(streamId: string, events: EventToAppend[], options: AppendOptions): Promise<AppendResult> {
    const existing = this.streams.get(streamId) ?? [];
    const current = existing.length ? existing[existing.length - 1].revision : -1;
    const known = new Set(existing.map((e) => e.id));
    if (events.length > 0 && events.every((e) => known.has(e.id))) {
      // The append's last event was stored last of its events.
      const last = existing.find((e) => e.id === events[events.length - 1].id)!;
      return { nextRevision: current, position: last.position };
    }
    if (options.unchangedSinceEpoch !== undefined && options.unchangedSinceEpoch !== this.epoch) {
      throw new WrongExpectedRevisionError(streamId, options.expectedRevision, current, EPOCH_MOVED);
    }
    if (!revisionMatches(options.expectedRevision, current)) {
      throw new WrongExpectedRevisionError(streamId, options.expectedRevision, current);
    }
    let revision = current;
    const now = Date.now();
    const positions: bigint[] = [];
    for (const e of events) {
      revision += 1;
      this.lastPosition += 1n;
      positions.push(this.lastPosition);
      const recorded: RecordedEvent = {
        id: e.id ?? randomUUID(),
        streamId,
        revision,
        position: this.lastPosition,
        type: e.type,
        data: structuredClone(e.data),
        metadata: structuredClone(e.metadata ?? {}),
        createdAt: now,
      };
      existing.push(recorded);
      this.log.push(recorded);
    }
    this.streams.set(streamId, existing);
    for (const s of this.subscriptions) s.notify();
    return { nextRevision: revision, position: this.lastPosition, stored: { positions, createdAt: now }, epoch: this.epoch };
  }

  highestPosition(): bigint {
    return this.lastPosition;
  }

  async deleteStream(streamId: string): Promise<void> {
    this.epoch++;
    this.streams.delete(streamId);
    for (let i = this.log.length - 1; i >= 0; i--) if (this.log[i].streamId === streamId) this.log.splice(i, 1);
  }

  async listStreams(prefix: string): Promise<string[]> {
    return [...this.streams.keys()].filter((id) => id.startsWith(prefix));
  }

  subscribeBatches(options: SubscriptionOptions, handler: BatchHandler): Subscription {
    return this.subscribe(options, handler);
  }

  subscribe(options: SubscriptionOptions, handler: EventHandler | BatchHandler): Subscription {
    const sub = new PollingSubscription(
      options,
      (after, limit) =>
        this.log
          .filter((e) => after === undefined || e.position > after)
          .slice(0, limit)
          .map((e) => structuredClone(e)),
      handler,
      () => this.subscriptions.delete(sub),
      (after, prefixes, limit) => {
        const behind = this.log
          .filter((e) => (after === undefined || e.position > after) && prefixes.some((p) => e.streamId.startsWith(p)))
          .slice(0, limit);
        return { events: behind.length, oldestCreatedAt: behind[0]?.createdAt };
      },
    );
    this.subscriptions.add(sub);
    return sub;
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    for (const s of [...this.subscriptions]) await s.stop();
  }
}
