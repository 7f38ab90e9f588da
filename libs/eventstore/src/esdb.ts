import type { KurrentDBClient, ResolvedEvent } from '@kurrent/kurrentdb-client';
import {
  type AppendResult, type EventHandler, type EventStore, type EventToAppend, type ExpectedRevision,
  type ReadStreamOptions, type RecordedEvent, type StreamRead, type Subscription, type SubscriptionOptions,
  WrongExpectedRevisionError,
} from './port';

/**
 * KurrentDB / EventStoreDB through `@kurrent/kurrentdb-client`, the maintained successor of
 * `@eventstore/db-client` (same protocol; the old package gets no new releases).
 * Positions are the commit positions of `$all`.
 */
// Required when the adapter is used, not at import: the client costs start-up time the embedded mode need not pay.
const kurrent = () => require('@kurrent/kurrentdb-client') as typeof import('@kurrent/kurrentdb-client');

export class EsdbEventStore implements EventStore {
  private readonly client: KurrentDBClient;
  private readonly subscriptions = new Set<Subscription>();

  constructor(connectionString: string) {
    this.client = kurrent().KurrentDBClient.connectionString(connectionString);
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StreamRead> {
    const { START, StreamNotFoundError } = kurrent();
    const events: RecordedEvent[] = [];
    const from = options.fromRevision ?? 0;
    try {
      for await (const resolved of this.client.readStream(streamId, { fromRevision: from > 0 ? BigInt(from) : START, direction: 'forwards' })) {
        const recorded = toRecorded(resolved);
        if (recorded) events.push(recorded);
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return { revision: -1, events: [] };
      throw error;
    }
    // Nothing from `from` on: the stream ends just before it (it exists, or a read from 0 would have thrown).
    return { revision: events.length ? events[events.length - 1].revision : from - 1, events };
  }

  async appendToStream(streamId: string, events: EventToAppend[], options: { expectedRevision: ExpectedRevision }): Promise<AppendResult> {
    const { ANY, NO_STREAM, WrongExpectedVersionError, jsonEvent } = kurrent();
    const expected = options.expectedRevision;
    try {
      const result = await this.client.appendToStream(
        streamId,
        events.map((e) => jsonEvent({ id: e.id, type: e.type, data: e.data, metadata: e.metadata ?? {} })),
        { streamState: expected === 'any' ? ANY : expected === 'no_stream' ? NO_STREAM : BigInt(expected) },
      );
      return { nextRevision: Number(result.nextExpectedRevision), position: result.position?.commit ?? 0n };
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        const actual = typeof error.actualState === 'bigint' ? Number(error.actualState) : -1;
        throw new WrongExpectedRevisionError(streamId, expected, actual);
      }
      throw error;
    }
  }

  async deleteStream(streamId: string): Promise<void> {
    const { StreamNotFoundError } = kurrent();
    try {
      await this.client.deleteStream(streamId);
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
  }

  subscribe(options: SubscriptionOptions, handler: EventHandler): Subscription {
    const { START, streamNameFilter } = kurrent();
    const from = options.fromPosition;
    const stream = this.client.subscribeToAll({
      fromPosition: from === undefined ? START : { commit: from, prepare: from },
      filter: streamNameFilter({ prefixes: options.streamPrefixes }),
    });
    let failure: unknown = null;
    let caughtUp = false;
    const caughtUpWaiters: Array<() => void> = [];
    stream.on('caughtUp', () => {
      caughtUp = true;
      caughtUpWaiters.splice(0).forEach((resolve) => resolve());
    });
    const consuming = (async () => {
      try {
        for await (const resolved of stream) {
          const recorded = toRecorded(resolved);
          if (recorded && options.streamPrefixes.some((p) => recorded.streamId.startsWith(p))) await handler(recorded);
        }
      } catch (error) {
        failure = error;
      }
    })();
    const subscription: Subscription = {
      caughtUp: async () => {
        if (!caughtUp) await new Promise<void>((resolve) => caughtUpWaiters.push(resolve));
        if (failure) throw failure;
      },
      stop: async () => {
        this.subscriptions.delete(subscription);
        await stream.unsubscribe();
        await consuming;
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  async ping(): Promise<boolean> {
    try {
      await this.readStream('$udp-ping');
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    for (const s of [...this.subscriptions]) await s.stop();
    await this.client.dispose();
  }
}

function toRecorded(resolved: ResolvedEvent): RecordedEvent | null {
  const e = resolved.event;
  if (!e || e.streamId.startsWith('$') || e.type.startsWith('$')) return null;
  return {
    id: e.id,
    streamId: e.streamId,
    revision: Number(e.revision),
    position: e.position?.commit ?? resolved.commitPosition ?? 0n,
    type: e.type,
    data: (e.data ?? {}) as Record<string, unknown>,
    metadata: (e.metadata ?? {}) as Record<string, unknown>,
    createdAt: e.created instanceof Date ? e.created.getTime() : Number(e.created ?? 0),
  };
}
