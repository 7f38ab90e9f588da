import type { Express } from 'express';
import type { InternalIdentity } from '@udp/auth';
import type { Bus } from '@udp/bus';
import { Projector, StreamStateCache, writeSide } from '@udp/eventsourcing';
import type { EventStore } from '@udp/eventstore';
import { createServiceApp, finish, requireIdentity, healthRoute } from '@udp/http-kit';
import type { ReadModelStore } from '@udp/readmodel';
import type { Logger } from '@udp/telemetry';
import { historyRoutes } from './api/routes';
import { HISTORY_COLLECTION, historyEntries, historyProjection } from './projections/history';
import { historyChangesPublisher } from './projections/history-changes';

export interface HistoryServiceDeps {
  store: EventStore;
  readModels: ReadModelStore;
  bus: Bus;
  identity: InternalIdentity;
  logger: Logger;
  now?: () => number;
  readYourWritesTimeoutMs?: number;
  maxBodyBytes?: number;
  /** How many users' folded histories are kept in memory for writes (least recently used dropped). */
  cachedHistories?: number;
}

export interface HistoryService {
  app: Express;
  stop(): Promise<void>;
}

/** Everything history-svc is, given its adapters: tests build it on memory adapters in one line. */
export async function createHistoryService(deps: HistoryServiceDeps): Promise<HistoryService> {
  const { store, readModels, bus, identity, logger } = deps;
  await readModels.ensureIndex(HISTORY_COLLECTION, { userId: 1, date: -1, item_id: 1 });
  const checkpoints = readModels.checkpoints();
  const projector = new Projector(store, checkpoints, historyProjection(readModels), { logger });
  const publisher = new Projector(store, checkpoints, historyChangesPublisher(bus), { logger });
  await projector.start();
  await publisher.start();

  const app = createServiceApp({ logger, maxBodyBytes: deps.maxBodyBytes ?? 8 * 1024 * 1024 });
  app.get('/health/', healthRoute(() => store.ping(), () => readModels.ping(), () => projector.healthy()));
  app.use(requireIdentity(identity));
  app.use(
    historyRoutes({
      write: writeSide(store, projector, deps.readYourWritesTimeoutMs, logger),
      states: new StreamStateCache(deps.cachedHistories ?? 1000),
      entries: historyEntries(readModels),
      now: deps.now ?? Date.now,
    }),
  );
  finish(app);

  return {
    app,
    async stop() {
      await publisher.stop();
      await projector.stop();
    },
  };
}
