import type { Express } from 'express';
import type { InternalIdentity } from '@udp/auth';
import type { Bus } from '@udp/bus';
import {
  type Aggregate,
  type BeforeAppend,
  type Command,
  type CommandHandler,
  type DomainEvent,
  InlineProjector,
  Projector,
  StateCache,
  commandHandler,
  erasureParticipant,
  writeSide,
  type ErasureParticipantOptions,
  type Projection,
  type SegmentsOptions,
  type SnapshotCodec,
  type StateCacheOptions,
} from '@udp/eventsourcing';
import type { EventStore, SnapshotStore } from '@udp/eventstore';
import type { CheckpointStore, ReadModelStore } from '@udp/readmodel';
import { type InternalReads, UserGate } from '@udp/http-kit';
import type { Logger } from '@udp/telemetry';

/** The adapters every event-sourced service is built on. */
export interface ServiceAdapters {
  store: EventStore;
  readModels: ReadModelStore;
  /** Where erasure requests come from and confirmations go (and where changes are published, if the service does). */
  bus: Bus;
  identity: InternalIdentity;
  logger: Logger;
}

/** What every event-sourced service's factory takes: its adapters and the options all of them share. */
export interface ServiceDeps extends ServiceAdapters {
  /** Distributed mode: the replicas divide the projection and publishing work (segments.ts); absent: this process does it all. */
  segments?: SegmentsOptions;
  now?: () => number;
  readYourWritesTimeoutMs?: number;
  /** /readyz fails while a read-model projection is further behind than this (PROJECTION_MAX_LAG_S). */
  projectionMaxLagSeconds?: number;
  maxBodyBytes?: number;
  /**
   * (Tests staging a race in one process) One stream's commands run side by side, as on separate replicas, instead of
   * one after another in this process (`CommandHandlerDeps.sideBySide`).
   */
  writesSideBySide?: boolean;
}

/** A built service: its HTTP app, and how to stop what it started. */
export interface ServiceApp {
  app: Express;
  /** Its internal reads (live sync's pulls), for the embedded gateway to call in process; their routes are in `app`. */
  internal?: InternalReads;
  stop(): Promise<void>;
}

/** For services whose write side keeps snapshots of folded states. */
export interface SnapshotDeps {
  /** Where folded states are saved every `snapshotEvery` events and at stop (none: every write starts from memory or the stream). */
  snapshots?: SnapshotStore;
  snapshotEvery?: number;
}

/**
 * An aggregate's folded states from the service's deps: the last `maxStreams` streams' states in memory, saved every
 * `snapshotEvery` events (default 1000) when the deps give a snapshot store and the aggregate a snapshot codec.
 */
export function serviceStateCache<S>(
  deps: SnapshotDeps & Pick<ServiceDeps, 'logger'>,
  aggregate: { snapshot?: SnapshotCodec<S> },
  maxStreams = 1000,
  fromRows?: StateCacheOptions<S>['fromRows'],
): StateCache<S> {
  const codec = aggregate.snapshot;
  return new StateCache<S>({
    maxStreams,
    snapshots: deps.snapshots && codec && { store: deps.snapshots, codec, every: deps.snapshotEvery ?? 1000 },
    fromRows,
    logger: deps.logger,
  });
}

export interface ServiceProjectionsOptions {
  /** The participant's name in erasure confirmations. */
  service: string;
  /**
   * The read model the service answers from: its writes are answered once it shows them ("read your writes"). With
   * `inline` and no segments it is applied by the command handler from each append (InlineProjector); otherwise by
   * a projector the writes wait for.
   */
  projection: Projection;
  /**
   * `projection` holds only each user's own rows, and every append to its streams goes through the command handler:
   * in a single process (no segments) it is applied inline. The distributed mode's replicas keep the projector.
   */
  inline?: boolean;
  /** What many users share (history's trending): each its own asynchronous projector, which no write waits for. */
  shared?: Projection[];
  /** A second projection that publishes the service's changes on the bus, if it has one. */
  publisher?: Projection;
  /** Where the publisher keeps its checkpoint (default: the read models'; the export-worker's embedded mode: a file). */
  publisherCheckpoints?: CheckpointStore;
  /**
   * The publisher's messages tell of changes as they happen (live sync), and nothing needs those made before a
   * consumer started: on a bus that keeps nothing across a restart (the embedded one), a publisher without a
   * checkpoint (a new or lost read-model file) starts at the log's end, not at its beginning. Not for messages
   * that are work to be done (the export-worker's requests): those are published however late.
   */
  publishesChangesOnly?: boolean;
  /**
   * Small read models every replica applies whole (no segments), each with its own projector: e.g. the erasure
   * statuses, which every replica's coordinator waits on. In the order of `projectorsOf`.
   */
  wholeProjections?: Projection[];
  /** What erasing a user removes in this service, and the service's own work before (e.g. removing files). */
  erasure: Pick<ErasureParticipantOptions, 'streamsOfUser' | 'documentsOfUser' | 'beforeStreamsDeleted'>;
  /** The write side's folded states, if it keeps them: forgotten with an erased user, saved as snapshots at stop. */
  states?: Pick<StateCache<unknown>, 'forget' | 'flush'>;
  /** Whatever else the service keeps in memory of a user (e.g. answers already given), forgotten with them too. */
  inMemory?: Array<{ forget(streamId: string): Promise<void> }>;
  /**
   * Whether a user's requests are refused while this service erases them (UserGate; default true). Not for the
   * export-worker: the erasure's own `DELETE /api/data` is a request of the user there, and waits for the erasure.
   */
  gateRequests?: boolean;
}

export interface ServiceProjections {
  /** The read model's projector (the write side waits for it), or its inline projector. */
  projector: Projector | InlineProjector;
  /**
   * The command handler of one of the service's aggregates, set up once: the service's store and clock, and its writes
   * acknowledged once `projector`'s read model shows them (writes refused while the read models are down).
   */
  commandHandler<C extends Command, E extends DomainEvent, S, Id>(
    aggregate: Aggregate<C, E, S, Id>,
    states?: StateCache<S>,
    beforeAppend?: BeforeAppend<Id, E, S>,
  ): CommandHandler<C, E, S, Id>;
  /** What the service's HTTP app is built with besides its routes: logger, health (the bus too when it publishes), readiness, identity. */
  httpOptions: {
    logger: Logger;
    health: { store: EventStore; readModels: ReadModelStore; bus?: Bus; projectors: Array<Projector | InlineProjector> };
    maxProjectionLagSeconds?: number;
    identity: InternalIdentity;
    gate?: UserGate;
  };
  /** The projectors of `wholeProjections`, in their order. */
  wholeProjectors: Projector[];
  /** Every running projector, for the health check. */
  projectors: Array<Projector | InlineProjector>;
  /** Stops the erasure participant (it uses the projectors), saves the folded states, then stops the projectors. */
  stop(): Promise<void>;
}

/**
 * A publisher of changes with no checkpoint on a bus that keeps nothing across a restart: its checkpoint set at the
 * log's end. Publishing every change ever made again reached no one there (the gateway's live sync follows from the
 * latest message, and a device catches up from the service), and it was a third of the log's reading at a start
 * with no read models (1,130,000 messages).
 */
async function startPublisherAtTheEnd({ store, bus }: ServiceDeps, checkpoints: CheckpointStore, name: string): Promise<void> {
  if (bus.durable || !store.highestPosition || (await checkpoints.load(name)) !== null) return;
  await checkpoints.save(name, store.highestPosition());
}

/** Starts a service's projectors, its change publisher if any, and its erasure participant, with one stop() for all. */
export async function startServiceProjections(deps: ServiceDeps, options: ServiceProjectionsOptions): Promise<ServiceProjections> {
  const { store, readModels, bus, logger, segments } = deps;
  const checkpoints = readModels.checkpoints();
  const service = options.service;
  const inline = options.inline && !segments ? new InlineProjector(store, checkpoints, options.projection, { logger, service }) : undefined;
  const projector = inline ?? new Projector(store, checkpoints, options.projection, { logger, service, segments });
  const shared = (options.shared ?? []).map((p) => new Projector(store, checkpoints, p, { logger, service, segments }));
  const wholeProjectors = (options.wholeProjections ?? []).map((p) => new Projector(store, checkpoints, p, { logger, service }));
  const publisherCheckpoints = options.publisherCheckpoints ?? checkpoints;
  const publisher =
    options.publisher && new Projector(store, publisherCheckpoints, options.publisher, { logger, service, publishes: true, segments });
  const projectors = [projector, ...shared, ...wholeProjectors, ...(publisher ? [publisher] : [])];
  if (publisher && options.publishesChangesOnly) await startPublisherAtTheEnd(deps, publisherCheckpoints, publisher.name);
  for (const each of projectors) await each.start();
  await readModels.caughtUp?.();
  const gate = options.gateRequests === false ? undefined : new UserGate();
  const erasure = await erasureParticipant({
    gate,
    service,
    bus,
    store,
    readModels,
    logger,
    now: deps.now,
    projectors: [projector, ...shared],
    ...options.erasure,
    states: [...(options.states ? [options.states] : []), ...(options.inMemory ?? [])],
  });
  const write = writeSide({
    store,
    ...(inline ? { inline, paced: shared } : { projector: projector as Projector }),
    readYourWritesTimeoutMs: deps.readYourWritesTimeoutMs,
    logger,
    readModels,
  });
  return {
    projector,
    wholeProjectors,
    projectors,
    commandHandler: (aggregate, states, beforeAppend) =>
      commandHandler(aggregate, { write, now: deps.now ?? Date.now, states, beforeAppend, sideBySide: deps.writesSideBySide }),
    httpOptions: {
      logger,
      health: { store, readModels, ...(publisher && { bus }), projectors },
      maxProjectionLagSeconds: deps.projectionMaxLagSeconds,
      identity: deps.identity,
      gate,
    },
    async stop() {
      // The erasure consumer first: a state saved while an erasure runs could outlive it.
      await erasure.stop();
      await options.states?.flush();
      for (const each of [...projectors].reverse()) await each.stop();
    },
  };
}
