import { PREFERENCE_LIMITS } from '@udp/contracts';
import { internalReadRoutes, serviceHttpApp } from '@udp/http-kit';
import { commandHandler, writeSide } from '@udp/eventsourcing';
import { serviceStateCache, startServiceProjections, type ServiceApp, type ServiceDeps } from '@udp/runtime';
import { preferenceChanges } from './api/changes-route';
import { quotaClaims } from './api/quota-claims';
import { preferenceRoutes } from './api/routes';
import { preferenceAggregate, preferenceQuotaAggregate, preferenceQuotaStreamId } from './domain/aggregate';
import type { PreferenceQuotas } from './domain/decider';
import type { DocumentLimits } from './domain/json-document';
import { preferenceChangesPublisher } from './projections/preference-changes';
import {
  PREFERENCE_DOCUMENTS,
  PREFERENCE_KEYS,
  PREFERENCE_SEALING,
  preferenceDocuments,
  preferenceDocumentsOfUser,
  positionKeysOfEarlierModels,
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
  const { store, readModels, bus } = deps;
  // Before any of them is used: a store that seals keeps them so (docs/erasure.md, "PostgreSQL").
  readModels.seal?.(PREFERENCE_DOCUMENTS, PREFERENCE_SEALING);
  readModels.seal?.(PREFERENCE_KEYS, PREFERENCE_SEALING);
  await readModels.ensureIndex(PREFERENCE_KEYS, { userId: 1, key: 1 });
  // Live sync reads a user's keys in the order of their changes.
  await readModels.ensureIndex(PREFERENCE_KEYS, { userId: 1, changed: 1 });
  await positionKeysOfEarlierModels(preferenceKeys(readModels));
  const limits = {
    maxDocumentBytes: deps.limits?.maxDocumentBytes ?? PREFERENCE_LIMITS.maxDocumentBytes,
    maxKeyLength: deps.limits?.maxKeyLength ?? PREFERENCE_LIMITS.maxKeyLength,
    maxPathDepth: deps.limits?.maxPathDepth ?? PREFERENCE_LIMITS.maxPathDepth,
    maxJsonPathSteps: deps.limits?.maxJsonPathSteps ?? PREFERENCE_LIMITS.maxJsonPathSteps,
    maxJsonPathResultBytes: deps.limits?.maxJsonPathResultBytes ?? PREFERENCE_LIMITS.maxJsonPathResultBytes,
    maxKeys: deps.limits?.maxKeys ?? PREFERENCE_LIMITS.maxKeys,
    maxUserBytes: deps.limits?.maxUserBytes ?? PREFERENCE_LIMITS.maxUserBytes,
  };
  const writeRetries = deps.writeRetries ?? DEFAULT_WRITE_RETRIES;
  const now = deps.now ?? Date.now;
  // The per-user quota streams (docs/preference-svc.md, "Quotas"): states in memory, forgotten with an erased user.
  const quotaAggregate = preferenceQuotaAggregate(limits, writeRetries);
  const quotaStates = serviceStateCache({ logger: deps.logger }, quotaAggregate);
  const projections = await startServiceProjections(deps, {
    service: 'preference-svc',
    projection: preferenceProjection(readModels),
    // Each user's own rows: applied inline from the append in one process (no wait on a projector).
    inline: true,
    publisher: preferenceChangesPublisher(bus),
    publishesChangesOnly: true,
    erasure: {
      streamsOfUser: async (userId) => [...(await preferenceStreamsOfUser(store)(userId)), preferenceQuotaStreamId(userId)],
      documentsOfUser: preferenceDocumentsOfUser,
    },
    states: quotaStates,
  });
  const documents = preferenceDocuments(readModels);
  const keys = preferenceKeys(readModels);
  const beforeAppend = quotaClaims({
    store,
    keys,
    documents,
    quotaAggregate,
    now,
    // No read model follows quota streams: a claim is acknowledged once durable.
    claim: commandHandler(quotaAggregate, { write: writeSide({ store }), now, states: quotaStates, sideBySide: deps.writesSideBySide }),
  });

  const changes = preferenceChanges(keys, documents);
  const app = serviceHttpApp({
    ...projections.httpOptions,
    maxBodyBytes: deps.maxBodyBytes ?? 8 * 1024 * 1024,
    routes: [
      preferenceRoutes({
        handle: projections.commandHandler(preferenceAggregate(limits, writeRetries), undefined, beforeAppend),
        documents,
        keys,
        limits,
      }),
      internalReadRoutes(changes),
    ],
  });
  return { app, internal: changes, stop: projections.stop };
}
