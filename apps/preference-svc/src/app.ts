import { PREFERENCE_LIMITS } from '@udp/contracts';
import { serviceHttpApp } from '@udp/http-kit';
import { startServiceProjections, type ServiceApp, type ServiceDeps } from '@udp/runtime';
import { preferenceRoutes } from './api/routes';
import { preferenceAggregate } from './domain/aggregate';
import type { PreferenceQuotas } from './domain/decider';
import type { DocumentLimits } from './domain/json-document';
import {
  PREFERENCE_KEYS,
  preferenceDocuments,
  preferenceDocumentsOfUser,
  preferenceKeys,
  preferenceProjection,
  preferenceStreamsOfUser,
} from './projections/preferences';

export interface PreferenceServiceDeps extends ServiceDeps {
  limits?: Partial<DocumentLimits & PreferenceQuotas>;
  /** Re-reads after a conflicting append before answering 429 (default 25: 20 parallel writers all land). */
  writeRetries?: number;
}

export const DEFAULT_WRITE_RETRIES = 25;

/** Everything preference-svc is, given its adapters: tests build it on memory adapters in one line. */
export async function createPreferenceService(deps: PreferenceServiceDeps): Promise<ServiceApp> {
  const { store, readModels } = deps;
  await readModels.ensureIndex(PREFERENCE_KEYS, { userId: 1, key: 1 });
  const limits = {
    maxDocumentBytes: deps.limits?.maxDocumentBytes ?? PREFERENCE_LIMITS.maxDocumentBytes,
    maxKeyLength: deps.limits?.maxKeyLength ?? PREFERENCE_LIMITS.maxKeyLength,
    maxPathDepth: deps.limits?.maxPathDepth ?? PREFERENCE_LIMITS.maxPathDepth,
    maxJsonPathSteps: deps.limits?.maxJsonPathSteps ?? PREFERENCE_LIMITS.maxJsonPathSteps,
    maxJsonPathResultBytes: deps.limits?.maxJsonPathResultBytes ?? PREFERENCE_LIMITS.maxJsonPathResultBytes,
    maxKeys: deps.limits?.maxKeys ?? PREFERENCE_LIMITS.maxKeys,
    maxUserBytes: deps.limits?.maxUserBytes ?? PREFERENCE_LIMITS.maxUserBytes,
  };
  const projections = await startServiceProjections(deps, {
    service: 'preference-svc',
    projection: preferenceProjection(readModels),
    erasure: { streamsOfUser: preferenceStreamsOfUser(store), documentsOfUser: preferenceDocumentsOfUser },
  });

  const app = serviceHttpApp({
    ...projections.httpOptions,
    maxBodyBytes: deps.maxBodyBytes ?? 8 * 1024 * 1024,
    routes: [
      preferenceRoutes({
        handle: projections.commandHandler(preferenceAggregate(limits, deps.writeRetries ?? DEFAULT_WRITE_RETRIES)),
        documents: preferenceDocuments(readModels),
        keys: preferenceKeys(readModels),
        limits,
      }),
    ],
  });
  return { app, stop: projections.stop };
}
