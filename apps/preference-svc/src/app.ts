import type { Express } from 'express';
import type { InternalIdentity } from '@udp/auth';
import { PREFERENCE_LIMITS } from '@udp/contracts';
import { Projector, writeSide } from '@udp/eventsourcing';
import type { EventStore } from '@udp/eventstore';
import { createServiceApp, finish, requireIdentity, healthRoute } from '@udp/http-kit';
import type { ReadModelStore } from '@udp/readmodel';
import type { Logger } from '@udp/telemetry';
import { preferenceRoutes } from './api/routes';
import type { DocumentLimits } from './domain/json-document';
import { PREFERENCE_KEYS, preferenceDocuments, preferenceKeys, preferenceProjection } from './projections/preferences';

export interface PreferenceServiceDeps {
  store: EventStore;
  readModels: ReadModelStore;
  identity: InternalIdentity;
  logger: Logger;
  now?: () => number;
  readYourWritesTimeoutMs?: number;
  maxBodyBytes?: number;
  limits?: Partial<DocumentLimits>;
  /** Re-reads after a conflicting append before answering 429 (default 25: 20 parallel writers all land). */
  writeRetries?: number;
}

export interface PreferenceService {
  app: Express;
  stop(): Promise<void>;
}

export const DEFAULT_WRITE_RETRIES = 25;

/** Everything preference-svc is, given its adapters: tests build it on memory adapters in one line. */
export async function createPreferenceService(deps: PreferenceServiceDeps): Promise<PreferenceService> {
  const { store, readModels, identity, logger } = deps;
  await readModels.ensureIndex(PREFERENCE_KEYS, { userId: 1, key: 1 });
  const projector = new Projector(store, readModels.checkpoints(), preferenceProjection(readModels), { logger });
  await projector.start();

  const app = createServiceApp({ logger, maxBodyBytes: deps.maxBodyBytes ?? 8 * 1024 * 1024 });
  app.get('/health/', healthRoute(() => store.ping(), () => readModels.ping(), () => projector.healthy()));
  app.use(requireIdentity(identity));
  app.use(
    preferenceRoutes({
      write: writeSide(store, projector, deps.readYourWritesTimeoutMs, logger),
      documents: preferenceDocuments(readModels),
      keys: preferenceKeys(readModels),
      limits: {
        maxDocumentBytes: deps.limits?.maxDocumentBytes ?? PREFERENCE_LIMITS.maxDocumentBytes,
        maxKeyLength: deps.limits?.maxKeyLength ?? PREFERENCE_LIMITS.maxKeyLength,
        maxPathDepth: deps.limits?.maxPathDepth ?? PREFERENCE_LIMITS.maxPathDepth,
      },
      writeRetries: deps.writeRetries ?? DEFAULT_WRITE_RETRIES,
      now: deps.now ?? Date.now,
    }),
  );
  finish(app);

  return {
    app,
    async stop() {
      await projector.stop();
    },
  };
}
