import type { EventStore, RecordedEvent, Subscription } from '@udp/eventstore';
import { type CheckpointStore, applyAndSave } from '@udp/readmodel';
import { backoffDelayMs } from '@udp/retry';
import { METRICS, observeGauge, recordCounter } from '@udp/telemetry';
import { SegmentClaims, type SegmentsOptions, segmentOf } from './segments';
import type { WarningLogger } from './command-handler';
import { withEventTraceContext } from './trace-context';

/** Where an event is applied from. */
export interface ApplyContext {
  /**
   * (Segments) The event's segment. Events reach a projection in store order within a segment only: replicas apply
   * their segments side by side. A document that several users' events change (a count) guards per segment.
   */
  segment?: number;
}

/** A projection turns events into read-model updates. `apply` must be idempotent. */
export interface Projection {
  name: string;
  streamPrefixes: string[];
  apply(event: RecordedEvent, context?: ApplyContext): Promise<void>;
  /**
   * (Optional) Applies events in hand together, in order (a publisher: one produce for all). Idempotent like
   * `apply`: a batch that failed is applied again whole. Without it, each event is applied by `apply`. `contexts`:
   * each event's, in the same order.
   */
  applyBatch?(events: RecordedEvent[], contexts?: ApplyContext[]): Promise<void>;
  /**
   * (Optional) Streams with the same key are applied by the inline projector one append at a time, in store order
   * (by default each stream is its own key): a read model ordered across several streams of a user names the user.
   */
  orderKey?(streamId: string): string;
}

/** The most events a distributed projector takes in one batch (one checkpoint, one produce). */
export const BATCH_MAX = 100;
/**
 * The most a one-process projector applies together: the batch runs on the event loop that answers every request,
 * in one piece, so it is kept to a few milliseconds.
 */
export const TOGETHER_MAX = 25;

interface Waiter {
  revision: number;
  resolve: () => void;
}

/** How a projector retries a failed event, and where it reports. */
export interface ProjectorOptions {
  /** First pause before retrying a failed event; doubles up to `maxRetryDelayMs`. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  /** Told about every failed attempt. */
  onError?: (error: unknown, event: RecordedEvent, attempt: number) => void;
  /** Where failed attempts are logged. */
  logger?: WarningLogger;
  /** The app this projector runs for (`udp.service` on its lag metrics). */
  service?: string;
  /** A change publisher: its lag is also the publisher's backlog (`udp.publisher.backlog`). */
  publishes?: boolean;
  /**
   * Replicas share the work (distributed mode): this one applies only the segments it claims (segments.ts). Absent
   * (embedded mode, one process): it applies every event, with one checkpoint.
   */
  segments?: SegmentsOptions;
}

/** How far a projector is behind its store. */
export interface ProjectionLag {
  /** Events of its streams stored and not applied yet, counted up to LAG_COUNT_LIMIT. */
  events: number;
  /** Age of the oldest of them, 0 when caught up. */
  seconds: number;
}

/** Lag is counted up to this many events: past it, the projection is far behind whatever the exact number. */
export const LAG_COUNT_LIMIT = 10_000;

/**
 * Follows the event store from the projection's checkpoint and applies every matching event in order.
 * It also tells the write side when its own append is visible ("read your writes").
 */
export class Projector {
  private subscription: Subscription | null = null;
  private readonly applied = new Map<string, number>();
  private readonly waiters = new Map<string, Waiter[]>();
  private failure: unknown = null;
  private stopping = false;
  private lagRead: { at: number; lag: Promise<ProjectionLag> } | null = null;
  private readonly unobserve: Array<() => void> = [];
  private claims: SegmentClaims | null = null;
  private restarting: Promise<void> = Promise.resolve();
  /** (Segments) The segments this projector applies, with their checkpoints: those held once its subscription follows them. */
  private readonly active = new Map<number, bigint | undefined>();
  /** (Segments) Position of the last event handled (applied or skipped) by the current subscription. */
  private passed: bigint | undefined;
  /** (Segments) Counts the subscriptions: what was passed by one says nothing of the segments of the next. */
  private generation = 0;

  constructor(
    private readonly store: EventStore,
    private readonly checkpoints: CheckpointStore,
    private readonly projection: Projection,
    private readonly options: ProjectorOptions = {},
  ) {}

  async start(): Promise<void> {
    const from = await this.checkpoints.load(this.projection.name);
    if (this.options.segments) {
      const segments = this.options.segments;
      this.claims = new SegmentClaims(this.projection.name, segments, {
        // Not awaited: the claim loop keeps renewing while the subscription under way finishes its event.
        gained: () => void this.resubscribe(),
        lost: (lost) => {
          for (const segment of lost) this.active.delete(segment);
          this.options.logger?.warn({ projection: this.projection.name, segments: lost }, 'segments no longer held');
          // Followed anew for the segments still held: the store (PostgreSQL) then no longer reads the others' events
          // for this replica to skip. The first replica of a deployment held every segment and read every event.
          void this.resubscribe();
        },
        renewed: () => this.advanceIdleSegments(),
      });
      // The checkpoint from before segments existed is where every segment starts. The first round's claims start
      // the subscription (`gained`); it is waited for here.
      await this.claims.start(from);
      await this.restarting;
    } else {
      this.subscription = this.subscribe(from ?? undefined);
    }
    // Observed from the start: a replay at start-up shows as lag too.
    const attributes = this.attributes;
    this.unobserve.push(
      observeGauge(METRICS.projectionLagEvents, async (observe) => observe((await this.lag()).events, attributes)),
      observeGauge(METRICS.projectionLagSeconds, async (observe) => observe((await this.lag()).seconds, attributes)),
    );
    if (this.claims) {
      const claims = this.claims;
      this.unobserve.push(observeGauge(METRICS.projectionSegmentsHeld, (observe) => observe(claims.held.size, attributes)));
    }
    if (this.options.publishes) {
      this.unobserve.push(observeGauge(METRICS.publisherBacklog, async (observe) => observe((await this.lag()).events, attributes)));
    }
    await this.subscription?.caughtUp();
  }

  private subscribe(from: bigint | undefined): Subscription {
    // (Segments) Only the segments this replica applies, asked of the store: one that can (PostgreSQL) reads no other's.
    const segments = this.claims ? { count: this.options.segments!.count, ids: [...this.active.keys()] } : undefined;
    const options = { fromPosition: from, streamPrefixes: this.projection.streamPrefixes, ...(segments && { segments }) };
    // (Segments) The events in hand as one batch: one checkpoint per batch, not per event (the store's round trips).
    if (this.claims && this.store.subscribeBatches)
      return this.store.subscribeBatches(options, { max: BATCH_MAX, handle: (events) => this.handleBatch(events) });
    // (One process) A projection that takes batches gets the events in hand together too (trending's counts changed
    // once per hour and item for a user's 5,000-entry batch, not once per entry).
    if (this.projection.applyBatch && this.store.subscribeBatches)
      return this.store.subscribeBatches(options, { max: TOGETHER_MAX, handle: (events) => this.handleTogether(events) });
    return this.store.subscribe(options, (event) => this.handle(event));
  }

  /**
   * (One process) Events in hand applied together, then the checkpoint at the last; again whole when it failed. Events
   * of one request's trace go together, so what the projection does (a publisher's produce) joins that trace.
   */
  private async handleTogether(events: RecordedEvent[]): Promise<void> {
    for (let from = 0; from < events.length;) {
      const traceparent = events[from].metadata?.traceparent;
      let to = from + 1;
      while (to < events.length && events[to].metadata?.traceparent === traceparent) to++;
      const together = events.slice(from, to);
      const last = together[together.length - 1];
      // The batch's writes and its checkpoint in one transaction where the store can (applyAndSave).
      await this.retried(together[0], () =>
        applyAndSave(
          this.checkpoints,
          () => withEventTraceContext(together[0], () => this.projection.applyBatch!(together)),
          () => this.checkpoints.save(this.projection.name, last.position),
        ),
      );
      recordCounter(METRICS.projectionApplied, together.length, this.attributes);
      for (const event of together) this.markApplied(event);
      from = to;
    }
  }

  /**
   * (Segments) Follows the store again from the lowest checkpoint of the segments held: after a claim, the new
   * segment's events before the current position must be read. Events of segments already further on are skipped.
   */
  private resubscribe(): Promise<void> {
    const run = async () => {
      if (this.stopping) return;
      await this.subscription?.stop();
      this.subscription = null;
      // A segment gained is applied only from here on: the subscription that ran until now never applies it, so its
      // checkpoint cannot move past events that subscription skipped.
      this.active.clear();
      for (const [segment, position] of this.claims!.held) this.active.set(segment, position);
      this.passed = undefined;
      this.generation++;
      const checkpoints = [...this.active.values()];
      if (checkpoints.length === 0) return;
      const from = checkpoints.some((p) => p === undefined) ? undefined : checkpoints.reduce((a, b) => (b! < a! ? b : a));
      this.subscription = this.subscribe(from);
    };
    return (this.restarting = this.restarting.then(run, run));
  }

  /** One event: applied, unless (segments) this replica does not apply its segment or applied it already. */
  private async handle(event: RecordedEvent): Promise<void> {
    if (!this.claims) {
      await this.applyWithRetries(event, () => this.checkpoints.save(this.projection.name, event.position));
      return;
    }
    const segment = segmentOf(event.streamId, this.projection.streamPrefixes, this.options.segments!.count);
    const checkpoint = this.active.get(segment);
    if (this.active.has(segment) && (checkpoint === undefined || event.position > checkpoint)) {
      const outcome = await this.applyWithRetries(
        event,
        () => this.claims!.save(segment, event.position),
        segment,
        () => this.active.has(segment),
      );
      if (outcome?.saved) {
        this.claims.saved([segment], event.position);
        if (this.active.has(segment)) this.active.set(segment, event.position);
      } else if (outcome) {
        // Taken over meanwhile (this replica's lease ran out): the new holder applies it again (projections are idempotent).
        this.active.delete(segment);
        this.claims.held.delete(segment);
      }
    }
    this.passed = event.position;
  }

  /**
   * (Segments) Events in hand: those of the segments this replica applies (each after its segment's checkpoint) are
   * applied, and the checkpoints of their segments move up to the batch's last event in one update (they are applied
   * up to it), the two in one transaction where the store can (`applyAndSave`). A segment lost meanwhile is left to
   * its new holder, which applies its events again (projections are idempotent): its save matches nothing, and the
   * batch's writes, revision-guarded, are kept.
   */
  private async handleBatch(events: RecordedEvent[]): Promise<void> {
    const generation = this.generation;
    const last = events[events.length - 1].position;
    const segmentOfEvent = new Map(
      events.map((event) => [event, segmentOf(event.streamId, this.projection.streamPrefixes, this.options.segments!.count)]),
    );
    // Asked again by each attempt: a segment lost while a failed one waited is left to its new holder.
    const mineNow = () =>
      events.filter((event) => {
        const segment = segmentOfEvent.get(event)!;
        const checkpoint = this.active.get(segment);
        return this.active.has(segment) && (checkpoint === undefined || event.position > checkpoint);
      });
    let applied: RecordedEvent[] = [];
    let behind: number[] = [];
    let lost: number[] = [];
    const first = mineNow();
    const done =
      first.length > 0 &&
      (await this.retried(
        first[0],
        async () => {
          const mine = mineNow();
          // The segments of the events applied; a held segment without any moves with `advanceIdleSegments` (one
          // update per renewal), not with every batch: FerretDB writes each segment's document, and a batch of one
          // event rewrote all.
          const touched = new Set(mine.map((event) => segmentOfEvent.get(event)!));
          const moving = [...this.active]
            .filter(([segment, checkpoint]) => touched.has(segment) && (checkpoint === undefined || checkpoint < last))
            .map(([segment]) => segment);
          lost = await applyAndSave(
            this.checkpoints,
            () => this.applyMine(mine, segmentOfEvent),
            () => this.claims!.saveMany(moving, last),
          );
          [applied, behind] = [mine, moving];
        },
        () => mineNow().length > 0,
      ));
    if (done) {
      recordCounter(METRICS.projectionApplied, applied.length, this.attributes);
      for (const event of applied) this.markApplied(event);
      for (const segment of lost) {
        this.active.delete(segment);
        this.claims!.held.delete(segment);
      }
      const moved = behind.filter((segment) => !lost.includes(segment));
      this.claims!.saved(moved, last);
      if (this.generation === generation) for (const segment of moved) if (this.active.has(segment)) this.active.set(segment, last);
    }
    this.passed = last;
  }

  /** (Segments) A batch's events of this replica's segments: in one call of `applyBatch`, else one by one. */
  private async applyMine(mine: RecordedEvent[], segmentOfEvent: Map<RecordedEvent, number>): Promise<void> {
    if (mine.length === 0) return;
    const contexts = mine.map((event) => ({ segment: segmentOfEvent.get(event) }));
    if (this.projection.applyBatch) return this.projection.applyBatch(mine, contexts);
    for (const [i, event] of mine.entries()) await withEventTraceContext(event, () => this.projection.apply(event, contexts[i]));
  }

  /**
   * Work retried with back-off until it succeeds (the projector unhealthy meanwhile), unless it is no longer ours.
   * True once it succeeded, false when it was given up.
   */
  private async retried(event: RecordedEvent, work: () => Promise<void>, stillOurs = () => true): Promise<boolean> {
    const base = this.options.retryDelayMs ?? 100;
    for (let attempt = 1; ; attempt++) {
      try {
        await work();
        this.failure = null;
        return true;
      } catch (error) {
        this.failure = error;
        this.options.onError?.(error, event, attempt);
        this.options.logger?.warn(
          { err: error, projection: this.projection.name, streamId: event.streamId, revision: event.revision, attempt },
          'projection failed; retrying',
        );
        if (this.stopping) throw error;
        if (!stillOurs()) return false;
        const pause = backoffDelayMs(attempt, { baseMs: base, maxMs: this.options.maxRetryDelayMs ?? 5000 });
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  /**
   * (Segments) A segment's checkpoint moves only with its own events: a quiet one would stay far behind, and whoever
   * takes it over would read the store again from there. Every event up to `passed` was handled, so a held segment
   * whose checkpoint is behind it has nothing left before it: its checkpoint moves up to it.
   */
  private async advanceIdleSegments(): Promise<void> {
    const passed = this.passed;
    const generation = this.generation;
    if (passed === undefined || !this.claims) return;
    // `passed` speaks of this subscription's segments only: a resubscription meanwhile (a segment gained, whose
    // events before `passed` are still to be applied) ends the round.
    for (const [segment, checkpoint] of [...this.active]) {
      if (this.generation !== generation) return;
      if (checkpoint !== undefined && checkpoint >= passed) continue;
      if (!(await this.claims.save(segment, passed))) continue;
      this.claims.saved([segment], passed);
      const now = this.active.get(segment);
      if (this.generation === generation && this.active.has(segment) && (now === undefined || now < passed))
        this.active.set(segment, passed);
    }
  }

  /** How far behind the store this projector is; one store query per second at most (a collection reads it twice). */
  lag(): Promise<ProjectionLag> {
    if (!this.subscription) return Promise.resolve({ events: 0, seconds: 0 });
    if (this.lagRead && Date.now() - this.lagRead.at < 1000) return this.lagRead.lag;
    const lag = this.subscription.backlog(LAG_COUNT_LIMIT).then(({ events, oldestCreatedAt }) => ({
      events,
      seconds: oldestCreatedAt === undefined ? 0 : Math.max(0, Date.now() - oldestCreatedAt) / 1000,
    }));
    this.lagRead = { at: Date.now(), lag };
    lag.catch(() => (this.lagRead = null));
    return lag;
  }

  /**
   * A failed event (store or bus briefly unavailable) is retried with back-off until it succeeds: skipping it
   * would lose it, and stopping would leave every later event unprojected. Meanwhile the projector reports
   * unhealthy, so /health/ answers 503. Its writes and its checkpoint (`save`) in one transaction where the store
   * can. What `save` answered, or null when the event was given up (no longer ours).
   */
  private async applyWithRetries<T>(
    event: RecordedEvent,
    save: () => Promise<T>,
    segment?: number,
    stillOurs = () => true,
  ): Promise<{ saved: T } | null> {
    const context = segment === undefined ? undefined : { segment };
    let saved: T;
    const done = await this.retried(
      event,
      async () => {
        saved = await applyAndSave(this.checkpoints, () => withEventTraceContext(event, () => this.projection.apply(event, context)), save);
      },
      // (Segments) Given back or taken over meanwhile: its new holder applies it.
      stillOurs,
    );
    if (!done) return null;
    recordCounter(METRICS.projectionApplied, 1, this.attributes);
    this.markApplied(event);
    return { saved: saved! };
  }

  /** The projection's name (its checkpoint's and its metrics'). */
  get name(): string {
    return this.projection.name;
  }

  /** A change publisher (its lag is the bus's backlog). */
  get publishes(): boolean {
    return this.options.publishes === true;
  }

  /** The app it runs for, as its metrics name it. */
  get service(): string {
    return this.options.service ?? 'unknown';
  }

  private get attributes() {
    return { 'udp.service': this.service, 'udp.projection': this.projection.name };
  }

  /**
   * Resolves when the read model shows the stream at `revision` or later; false when the wait timed out. With
   * segments, the event's store `position` (from the append) also tells it: once the checkpoint of the stream's
   * segment, whichever replica holds it, has reached it.
   */
  waitFor(streamId: string, revision: number, timeoutMs = 5000, position?: bigint): Promise<boolean> {
    if ((this.applied.get(streamId) ?? -1) >= revision) return Promise.resolve(true);
    const segment = this.claims && segmentOf(streamId, this.projection.streamPrefixes, this.options.segments!.count);
    // Another replica applies it: its progress shows only in the segment's stored checkpoint.
    const remote =
      this.claims && position !== undefined && position > 0n && !this.active.has(segment!)
        ? this.claims.waitForCheckpoint(segment!, position, timeoutMs)
        : undefined;
    return new Promise<boolean>((resolve) => {
      const done = (seen: boolean) => {
        clearTimeout(timer);
        const others = (this.waiters.get(streamId) ?? []).filter((w) => w !== waiter);
        if (others.length) this.waiters.set(streamId, others);
        else this.waiters.delete(streamId);
        resolve(seen);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      const waiter: Waiter = { revision, resolve: () => done(true) };
      this.waiters.set(streamId, [...(this.waiters.get(streamId) ?? []), waiter]);
      void remote?.then((seen) => seen && done(true));
    });
  }

  /** Resolves once every event stored before the call was applied. */
  async caughtUp(): Promise<void> {
    await this.subscription?.caughtUp();
  }

  /** Forgets what was applied of a stream (erased): a stream started afresh is waited for from revision 0. */
  forget(streamId: string): void {
    this.applied.delete(streamId);
  }

  healthy(): boolean {
    return this.failure === null;
  }

  /** Stops following the store (the event under way is finished), then gives the segments back for the others. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const u of this.unobserve.splice(0)) u();
    await this.restarting;
    await this.subscription?.stop();
    await this.claims?.stop();
  }

  private markApplied(event: RecordedEvent): void {
    this.applied.set(event.streamId, event.revision);
    const list = this.waiters.get(event.streamId);
    if (!list) return;
    for (const w of list.filter((waiter) => waiter.revision <= event.revision)) w.resolve();
  }
}
