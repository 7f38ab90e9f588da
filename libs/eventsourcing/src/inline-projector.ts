import type { EventStore, RecordedEvent } from '@udp/eventstore';
import type { CheckpointStore } from '@udp/readmodel';
import { backoffDelayMs, timeSlices } from '@udp/retry';
import { METRICS, recordCounter } from '@udp/telemetry';
import type { WarningLogger } from './command-handler';
import type { Projection } from './projector';
import { withEventTraceContext } from './trace-context';

export interface InlineProjectorOptions {
  logger?: WarningLogger;
  /** The app it runs for (`udp.service` on its metrics). */
  service?: string;
  /** First pause before applying a failed append again; doubles up to `maxRetryDelayMs`. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
}

/** Events of one append a batch-taking projection is given at a time: a few milliseconds of work between turns (100 raised the p99 of other users beside 5,000-entry batches, 10 did not lower it below 25). */
export const INLINE_CHUNK = 25;

/** Events a batch-taking projection is given at a time when it replays the log at start, before anything is served. */
export const REPLAY_CHUNK = 500;

const settled = () => undefined;

/** A promise and what settles it (`InlineProjector.nextFailure`). */
function failureSignal(): { settled: Promise<void>; settle(): void } {
  let settle!: () => void;
  const signal = new Promise<void>((resolve) => (settle = resolve));
  return { settled: signal, settle };
}

/** One append being applied: its events' first and last store positions, and whether it is done. */
interface InFlight {
  first: bigint;
  last: bigint;
  done: boolean;
}

/**
 * A user's own read-model rows, applied by the writer (the command handler) as soon as its append is stored, in
 * the request that made it: a write is readable when it is answered, and waits for no one else's events. The
 * asynchronous `Projector` keeps what many users share (trending) and the change publisher, where a delay harms
 * no writer.
 *
 * Not one transaction with the append: the events are committed (fsync) by the event store's writer thread, and the
 * rows by the read models' connection on this thread, in their next batched commit. What makes that safe is the
 * checkpoint: it is saved in the read models' transaction and moves only over appends whose rows are all applied,
 * so a crash between the two commits leaves it before the lost rows, and `start` applies again every event after
 * it (the projection is idempotent, each row guarded by its stream revision). Hence every appended event's rows
 * exist once the process has started, and once its write is answered.
 *
 * One stream's appends are applied in their order (a head must never claim a revision whose entries are not
 * there), and so are the appends of the streams a projection's `orderKey` puts together (a user's preference keys,
 * whose rows are read in store-position order by live sync); different streams' side by side, each a few milliseconds at a time, so one user's 5,000-entry batch is
 * applied between the other users' requests, not before them.
 *
 * Every append to its streams must go through it (the command handler's `inline`): one made elsewhere would show
 * only after a restart. Single process only: the distributed mode's replicas keep the asynchronous projector.
 */
export class InlineProjector {
  /** Appends applied or being applied, in position order, down to the first not yet done. */
  private readonly inFlight: InFlight[] = [];
  /** The last application of each stream (or order key), which the next one of it waits for. */
  private readonly tails = new Map<string, Promise<void>>();
  private failure: unknown = null;
  /** Settled at the next failure of an application: a reader waits for none that is retried. */
  private nextFailure = failureSignal();
  private stopping = false;

  constructor(
    private readonly store: EventStore,
    private readonly checkpoints: CheckpointStore,
    private readonly projection: Projection,
    private readonly options: InlineProjectorOptions = {},
  ) {}

  /** The projection's name (its checkpoint's and its metrics'). */
  get name(): string {
    return this.projection.name;
  }

  get service(): string {
    return this.options.service ?? 'unknown';
  }

  /** Never a change publisher. */
  readonly publishes = false;

  /**
   * Applies every event stored after the checkpoint (a crash's lost rows, or all of them for a new read-model file),
   * in store order, before the service answers.
   */
  async start(): Promise<void> {
    const from = (await this.checkpoints.load(this.projection.name)) ?? undefined;
    const options = { fromPosition: from, streamPrefixes: this.projection.streamPrefixes };
    // A projection that takes batches replays in them, many streams' events together in store order: a rebuild of
    // 1,130,000 history events read, wrote and wrote the head of each entry one by one (its batches write each
    // user's head once, and read no recorded entry). Nothing else is served yet: the chunks can be long.
    const subscription =
      this.projection.applyBatch && this.store.subscribeBatches
        ? this.store.subscribeBatches(options, {
            max: REPLAY_CHUNK,
            handle: async (events) => {
              await this.applyChunk(events);
              await this.checkpoints.save(this.projection.name, events.at(-1)!.position);
            },
          })
        : this.store.subscribe(options, async (event) => {
            await this.applyOne(event);
            await this.checkpoints.save(this.projection.name, event.position);
          });
    await subscription.caughtUp();
    await subscription.stop();
  }

  /**
   * The events one append stored (in their order), applied after what the stream's earlier appends stored. Called
   * as soon as the append resolved, before anything else is awaited, so that appends are taken in store order.
   */
  applyAppended(events: RecordedEvent[]): Promise<void> {
    if (events.length === 0) return Promise.resolve();
    const entry: InFlight = { first: events[0].position, last: events.at(-1)!.position, done: false };
    let at = this.inFlight.length;
    while (at > 0 && this.inFlight[at - 1].first > entry.first) at--;
    this.inFlight.splice(at, 0, entry);
    const key = this.projection.orderKey?.(events[0].streamId) ?? events[0].streamId;
    const run = async () => {
      await this.applyWithRetries(events);
      entry.done = true;
      await this.advanceCheckpoint();
    };
    const previous = this.tails.get(key) ?? Promise.resolve();
    const applied = previous.then(run, run);
    this.tails.set(key, applied);
    void applied.finally(() => {
      if (this.tails.get(key) === applied) this.tails.delete(key);
    });
    return applied;
  }

  /**
   * The application under way of the stream's appends (and of those its order key puts with them), settled once it is
   * done, failed or not; null when none is. A large append is applied a few milliseconds at a time, other requests in
   * between: a reader of the stream's rows waits for it, or would see a part of it. Not while the read models fail: an
   * application retried until they are back would hold the reader as long (it gets what the read models answer).
   */
  applying(streamId: string): Promise<void> | null {
    const tail = this.failure === null && this.tails.get(this.projection.orderKey?.(streamId) ?? streamId);
    return tail ? Promise.race([tail, this.nextFailure.settled]).then(settled, settled) : null;
  }

  /** The checkpoint moves over the appends done, up to the first one still being applied. */
  private async advanceCheckpoint(): Promise<void> {
    let last: bigint | undefined;
    while (this.inFlight[0]?.done) last = this.inFlight.shift()!.last;
    if (last !== undefined) await this.checkpoints.save(this.projection.name, last);
  }

  /**
   * The read models failing (disk full) leave the events stored and the rows not: tried again with back-off, the
   * service unhealthy meanwhile; the write is answered once its rows are there or its wait times out (logged).
   */
  private async applyWithRetries(events: RecordedEvent[]): Promise<void> {
    const { slice } = timeSlices(2);
    // A projection that takes batches gets an append's events in chunks (a history's head written once per chunk,
    // not once per entry); a chunk that failed is applied again whole, as `applyBatch` allows.
    const step = this.projection.applyBatch ? INLINE_CHUNK : 1;
    let from = 0;
    for (let attempt = 1; ; attempt++) {
      try {
        for (; from < events.length; from += step) {
          if (step === 1) await this.applyOne(events[from]);
          else await this.applyChunk(events.slice(from, from + step));
          // A long append (a batch of 5,000 entries) is applied a few milliseconds at a time: other requests go between.
          // Not after its last events: a single write's answer would wait for a turn behind every other piece of sliced
          // work (under a flood of writes, hundreds of them, ahead of the trending projector and the publisher).
          if (from + step < events.length) await slice();
        }
        this.failure = null;
        return;
      } catch (error) {
        this.failure = error;
        this.nextFailure.settle();
        this.nextFailure = failureSignal();
        const event = events[from];
        this.options.logger?.warn(
          { err: error, projection: this.projection.name, streamId: event.streamId, revision: event.revision, attempt },
          'inline projection failed; retrying',
        );
        if (this.stopping) throw error;
        const pause = backoffDelayMs(attempt, { baseMs: this.options.retryDelayMs ?? 100, maxMs: this.options.maxRetryDelayMs ?? 5000 });
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  private async applyChunk(events: RecordedEvent[]): Promise<void> {
    // One append's events: one request's trace.
    await withEventTraceContext(events[0], () => this.projection.applyBatch!(events));
    recordCounter(METRICS.projectionApplied, events.length, { 'udp.service': this.service, 'udp.projection': this.projection.name });
  }

  private async applyOne(event: RecordedEvent): Promise<void> {
    await withEventTraceContext(event, () => this.projection.apply(event));
    recordCounter(METRICS.projectionApplied, 1, { 'udp.service': this.service, 'udp.projection': this.projection.name });
  }

  /** Resolves once every append handed over so far is applied (erasure: before the user's rows are deleted). */
  async caughtUp(): Promise<void> {
    await Promise.all([...this.tails.values()].map((tail) => tail.catch(() => undefined)));
  }

  /** Nothing is remembered per stream once applied. */
  forget(): void {}

  healthy(): boolean {
    return this.failure === null;
  }

  /** Applied in the writer's request: never behind once answered (a failing one shows as unhealthy). */
  async lag(): Promise<{ events: number; seconds: number }> {
    return { events: 0, seconds: 0 };
  }

  /** Lets the appends under way finish (their writes are being answered). */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.caughtUp();
  }
}
