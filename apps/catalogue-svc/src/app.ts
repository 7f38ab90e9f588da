import compression from 'compression';
import type { Express } from 'express';
import type { QcItemDefinition } from '@udp/contracts';
import { Projector, commandHandler, writeSide } from '@udp/eventsourcing';
import type { EventStore } from '@udp/eventstore';
import { serviceHttpApp } from '@udp/http-kit';
import type { ReadModelStore } from '@udp/readmodel';
import type { Logger } from '@udp/telemetry';
import catalogueData from '../data/items.json';
import { catalogueRoutes } from './api/routes';
import { itemAggregate } from './domain/aggregate';
import { type ImportSummary, importCatalogue, parseCatalogueData } from './import/import-catalogue';
import { catalogueProjection, itemVersions } from './projections/catalogue';
import { CatalogueView } from './projections/catalogue-view';

export interface CatalogueServiceDeps {
  store: EventStore;
  readModels: ReadModelStore;
  logger: Logger;
  /** The catalogue to publish at start; default: data/items.json (the 45 completed EBU items). */
  items?: QcItemDefinition[];
  now?: () => number;
  readYourWritesTimeoutMs?: number;
  /** /readyz fails while the projection is further behind than this (PROJECTION_MAX_LAG_S). */
  projectionMaxLagSeconds?: number;
}

export interface CatalogueService {
  app: Express;
  imported: ImportSummary;
  stop(): Promise<void>;
}

/** Everything catalogue-svc is, given its adapters: tests build it on memory adapters in one line. */
export async function createCatalogueService(deps: CatalogueServiceDeps): Promise<CatalogueService> {
  const { store, readModels, logger } = deps;
  const versions = itemVersions(readModels);
  await readModels.ensureIndex('qc_item_versions', { itemId: 1, revision: 1 });
  const view = new CatalogueView(versions);
  const projector = new Projector(
    store,
    readModels.checkpoints(),
    catalogueProjection(readModels, () => view.changed()),
    { logger, service: 'catalogue-svc' },
  );
  await projector.start();
  await readModels.caughtUp?.();

  // Publishing is the import command: only versions not yet published become events.
  const now = deps.now ?? Date.now;
  const write = writeSide({ store, projector, readYourWritesTimeoutMs: deps.readYourWritesTimeoutMs, logger });
  const imported = await importCatalogue(
    { store, handle: commandHandler(itemAggregate, { write, now }), now },
    deps.items ?? parseCatalogueData(catalogueData),
  );
  for (const refused of imported.refused) logger.error(refused, 'catalogue item version refused');
  logger.info(
    { published: imported.published.length, unchanged: imported.unchanged.length, refused: imported.refused.length },
    'catalogue imported',
  );

  const app = serviceHttpApp({
    logger,
    maxBodyBytes: 16 * 1024,
    health: { store, readModels, projectors: [projector] },
    maxProjectionLagSeconds: deps.projectionMaxLagSeconds,
    // Prepared renditions carry their own Content-Encoding; compression() compresses the rest (problems, icons).
    publicRoutes: [compression(), catalogueRoutes({ view })],
  });

  return { app, imported, stop: () => projector.stop() };
}
