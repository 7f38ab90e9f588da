import type { Consumer } from '@udp/bus';
import { erasureEvents, exportEvents } from '@udp/contracts';
import { InlineProjector, type Projector, commandHandler, currentState, writeSide } from '@udp/eventsourcing';
import { serviceHttpApp } from '@udp/http-kit';
import type { CheckpointStore } from '@udp/readmodel';
import { type ServiceApp, type ServiceDeps, startServiceProjections } from '@udp/runtime';
import { exportRoutes, publicExportRoutes } from './api/routes';
import { erasureAggregate, exportStreamId, exportsAggregate } from './domain/aggregate';
import { erasureRows, erasuresProjection } from './projections/erasures';
import { EXPORTS_COLLECTION, EXPORTS_SEALING, exportAddresses, exportRows, exportsProjection } from './projections/exports';
import { exportMessagesPublisher } from './projections/messages';
import type { AllowedHost, Resolver } from './worker/callback';
import { PARTICIPANT, erasureCoordinator } from './worker/erasure';
import { exportJob } from './worker/export-job';
import { type SourceUrls, userDataAreas } from './worker/sources';
import { type ExportStorage, removeExportFiles } from './worker/storage';
import { every, exportSweep, requestPendingExportsAgain } from './worker/housekeeping';
import type { ExportArea } from './worker/zip';

const { EXPORT_TOPICS } = exportEvents;
const { ERASURE_TOPICS } = erasureEvents;

/** The adapters and options every service takes (segments: the replicas divide the exports and their messages), and the worker's own. */
export interface ExportWorkerDeps extends ServiceDeps {
  storage: ExportStorage;
  /** Where history, playlists, preferences and profile are (a function: tests learn the ports late). */
  sources: SourceUrls | (() => SourceUrls);
  /** Checkpoints of the message publisher; default the read models' (embedded: a file, see main.ts). */
  publisherCheckpoints?: CheckpointStore;
  publicBaseUrl?: string;
  ttlMs?: number;
  maxLiveExports?: number;
  callbackHosts?: AllowedHost[];
  callbackSecret: string;
  callbackAttempts?: number;
  callbackRetryMs?: number;
  resolve?: Resolver;
  sweepIntervalMs?: number;
  erasureParticipants?: string[];
  erasureTimeoutMs?: number;
  /** How often erasures still pending (for at least this long) are requested again; they are also at start. */
  erasureResumeIntervalMs?: number;
  buildRetryDelayMs?: number;
  /**
   * Publishes the request of every pending export again at start. For the in-process bus, whose messages do not
   * survive the process (Kafka keeps its own, so distributed instances leave this off).
   */
  redrivePendingOnStart?: boolean;
  /** Replaces the HTTP sources (benchmarks and tests of failures). */
  areas?: (userId: string, requestId: string, signal: AbortSignal) => ExportArea[];
}

export interface ExportWorker extends ServiceApp {
  /** Waits until background callbacks finished (tests). */
  drain(): Promise<void>;
  /** Deletes exports past their expiry and resumes interrupted callbacks, now (also runs every sweepIntervalMs). */
  sweep(): Promise<number>;
  /** Requests again every erasure pending for at least `olderThanMs` (also at start, and every erasureResumeIntervalMs). */
  resumeErasures(olderThanMs?: number): Promise<number>;
}

/** Everything export-worker is, given its adapters: HTTP API, export jobs, erasure coordinator and participant. */
export async function createExportWorker(deps: ExportWorkerDeps): Promise<ExportWorker> {
  const { store, readModels, bus, identity, logger, storage } = deps;
  const now = deps.now ?? Date.now;
  const addresses = exportAddresses(deps.publicBaseUrl ?? 'http://localhost:8080');
  // Before it is used: a store that seals keeps it so (docs/erasure.md, "PostgreSQL").
  readModels.seal?.(EXPORTS_COLLECTION, EXPORTS_SEALING);
  await readModels.ensureIndex(EXPORTS_COLLECTION, { userId: 1, createdOn: -1 });
  // Set up before the projections: the erasure participant cancels the user's builds in flight first.
  let cancelBuilds: (userId: string) => Promise<unknown> = async () => undefined;
  // Replicas divide the exports and their messages (segments); the erasures projection is small and every replica's
  // coordinator waits on it for confirmations it has no store position of, so each replica applies all of it.
  const projections = await startServiceProjections(deps, {
    service: PARTICIPANT,
    projection: exportsProjection(readModels),
    wholeProjections: [erasuresProjection(readModels)],
    publisher: exportMessagesPublisher(bus, addresses),
    publisherCheckpoints: deps.publisherCheckpoints,
    // Its `DELETE /api/data` is a request of the user that waits for the erasure: the gateway holds the others.
    gateRequests: false,
    // The export-worker's own part of an erasure, by the rule every service follows: the user's exports in flight
    // are cancelled and every stored object of the user's exports removed before the streams go.
    erasure: {
      streamsOfUser: (userId) => [exportStreamId(userId)],
      documentsOfUser: (userId) => [{ collection: EXPORTS_COLLECTION, filter: { userId } }],
      async beforeStreamsDeleted(userId) {
        await cancelBuilds(userId);
        const state = await currentState(exportsAggregate, store, userId);
        await removeExportFiles(storage, state, [...state.exports.keys()]);
      },
    },
  });
  const [erasuresProjector] = projections.wholeProjectors;
  // The worker's writes are acknowledged whatever the read models' state (as before: a build in flight must record
  // its outcome), each waiting (bounded) for the projector that shows it.
  const writeSideOf = (projector: Projector | InlineProjector) =>
    writeSide({
      store,
      ...(projector instanceof InlineProjector ? { inline: projector } : { projector }),
      readYourWritesTimeoutMs: deps.readYourWritesTimeoutMs,
      logger,
    });
  const handleExports = commandHandler(exportsAggregate, { write: writeSideOf(projections.projector), now });

  const rows = exportRows(readModels);
  const job = exportJob({
    handle: handleExports,
    storage,
    addresses,
    logger,
    now,
    areas: deps.areas ?? ((userId, requestId, signal) => userDataAreas(deps.sources, identity, userId, requestId, signal)),
    callback: {
      allowed: deps.callbackHosts ?? [],
      secret: deps.callbackSecret,
      resolve: deps.resolve,
      attempts: deps.callbackAttempts ?? 6,
      retryDelayMs: deps.callbackRetryMs ?? 2000,
    },
    buildRetryDelayMs: deps.buildRetryDelayMs,
  });
  cancelBuilds = job.cancel;
  const coordinator = erasureCoordinator({
    store,
    bus,
    logger,
    now,
    // An erasure's writes wait for the erasure statuses, which every replica applies whole.
    handle: commandHandler(erasureAggregate, { write: writeSideOf(erasuresProjector), now }),
    projector: erasuresProjector,
    erasures: erasureRows(readModels),
    participants: deps.erasureParticipants ?? [...erasureEvents.DEFAULT_ERASURE_PARTICIPANTS],
    timeoutMs: deps.erasureTimeoutMs ?? 10_000,
  });

  // Consumer groups: every instance shares the work of each (Kafka spreads partitions over the instances).
  const consumers: Consumer[] = [
    await bus.subscribe(EXPORT_TOPICS.requested, 'export-worker', async (m) => {
      const parsed = exportEvents.ExportRequestedMessage.safeParse(m.value);
      if (!parsed.success) return void logger.warn({ topic: m.topic, offset: m.offset }, 'malformed export request skipped');
      await job.handle(parsed.data, m.headers?.['event-id'] ?? m.offset);
    }),
    await bus.subscribe(ERASURE_TOPICS.confirmed, 'export-worker-erasure-coordinator', async (m) => {
      const parsed = erasureEvents.ErasureConfirmedMessage.safeParse(m.value);
      if (!parsed.success) return void logger.warn({ topic: m.topic, offset: m.offset }, 'malformed erasure confirmation skipped');
      await coordinator.onConfirmed(parsed.data);
    }),
  ];

  if (deps.redrivePendingOnStart) await requestPendingExportsAgain({ rows, bus, logger });
  const sweep = exportSweep({ rows, handle: handleExports, storage, resumeCallback: job.resumeCallback, now, logger });
  const sweeping = every(deps.sweepIntervalMs ?? 60_000, sweep, (error) => logger.warn({ err: error }, 'sweep failed'));

  // Erasures accepted before a crash (or whose request a bus lost) are requested again now, and any that is late
  // again later: an accepted erasure completes whatever process stopped (participants are idempotent by erasure id).
  const resumeIntervalMs = deps.erasureResumeIntervalMs ?? 30_000;
  const resumeErasures = (olderThanMs = 0) => coordinator.resume(olderThanMs);
  const notResumed = (error: unknown) => logger.warn({ err: error }, 'pending erasures not resumed');
  const resumedAtStart = resumeErasures().catch(notResumed);
  const resuming = every(resumeIntervalMs, () => resumeErasures(resumeIntervalMs), notResumed);

  const routeDeps = {
    handle: handleExports,
    rows,
    erasures: erasureRows(readModels),
    storage,
    addresses,
    now,
    allowedCallbackHosts: deps.callbackHosts ?? [],
    resolve: deps.resolve,
    ttlMs: deps.ttlMs ?? 7 * 86_400_000,
    maxLiveExports: deps.maxLiveExports ?? 10,
    erase: coordinator.request,
  };
  const app = serviceHttpApp({
    ...projections.httpOptions,
    maxBodyBytes: deps.maxBodyBytes ?? 64 * 1024,
    publicRoutes: [publicExportRoutes(routeDeps)],
    routes: [exportRoutes(routeDeps)],
  });

  return {
    app,
    drain: () => job.drain(),
    sweep,
    resumeErasures,
    async stop() {
      await sweeping.stop();
      await resuming.stop();
      await resumedAtStart;
      for (const consumer of consumers) await consumer.stop();
      await job.drain();
      await projections.stop();
    },
  };
}
