import { join, resolve } from 'node:path';
import { fileSecret } from '@udp/auth';
import { serviceProcess, sharedReadModelsKind } from '@udp/runtime';
import { createExportWorker } from './app';
import { fileCheckpoints } from './projections/checkpoints';
import { exportConfigSchema } from './config';
import { PostgresExportStorage } from './worker/postgres-storage';
import { FileExportStorage, GridFsExportStorage, type ExportStorage } from './worker/storage';

/** Where the zips are kept, by the store of the shared read models (none: embedded). */
const STORAGE_BESIDE = { postgresql: 'postgresql', mongodb: 'gridfs', none: 'files' } as const;

/** Wiring only: configuration in, adapters and export storage chosen by it, the worker out on its port. */
export const start = serviceProcess({
  name: 'export-worker',
  defaultPort: 8086,
  configSchema: exportConfigSchema,
  create: async ({ adapters, config, logger }) => {
    const dataDir = resolve(config.DATA_DIR);
    // Where the zips live: beside the shared read models (PostgreSQL or MongoDB's GridFS), else files under DATA_DIR.
    const shared = sharedReadModelsKind(config);
    const sharedUrl = (config.READMODEL_URL ?? config.MONGO_URL)!;
    const namespace = `${config.MONGO_DB_PREFIX}_export_worker`;
    let storage: ExportStorage;
    let closeStorage = async () => undefined as void;
    if (shared === 'postgresql') {
      const postgres = new PostgresExportStorage(sharedUrl.trim(), namespace);
      storage = postgres;
      closeStorage = () => postgres.close();
    } else if (shared === 'mongodb') {
      const { MongoClient } = require('mongodb') as typeof import('mongodb');
      const client = await MongoClient.connect(sharedUrl, { serverSelectionTimeoutMS: 5000 });
      storage = new GridFsExportStorage(client.db(namespace));
      closeStorage = () => client.close();
    } else {
      storage = new FileExportStorage(join(dataDir, 'exports'));
    }
    const worker = await createExportWorker({
      ...adapters,
      logger,
      storage,
      sources: {
        history: config.HISTORY_SVC_URL,
        playlist: config.PLAYLIST_SVC_URL,
        preference: config.PREFERENCE_SVC_URL,
        profile: config.PROFILE_SVC_URL,
      },
      // Embedded: statuses are rebuilt in memory, but messages already published must not be sent again.
      publisherCheckpoints: shared ? undefined : fileCheckpoints(join(dataDir, 'export-worker', 'publisher-checkpoints.json')),
      publicBaseUrl: config.EXPORT_PUBLIC_BASE_URL,
      ttlMs: config.EXPORT_TTL,
      maxLiveExports: config.EXPORT_MAX_PER_USER,
      callbackHosts: config.EXPORT_CALLBACK_HOSTS,
      callbackSecret: config.EXPORT_CALLBACK_SECRET ?? fileSecret(dataDir, 'export-callback'),
      callbackAttempts: config.EXPORT_CALLBACK_ATTEMPTS,
      callbackRetryMs: config.EXPORT_CALLBACK_RETRY_MS,
      sweepIntervalMs: config.EXPORT_SWEEP_INTERVAL_MS,
      erasureParticipants: config.ERASURE_PARTICIPANTS,
      erasureTimeoutMs: config.ERASURE_TIMEOUT_MS,
      erasureResumeIntervalMs: config.ERASURE_RESUME_INTERVAL_MS,
      readYourWritesTimeoutMs: config.READ_YOUR_WRITES_TIMEOUT_MS,
      projectionMaxLagSeconds: config.PROJECTION_MAX_LAG_S,
      // The in-process bus forgets its messages when the process stops; Kafka does not.
      redrivePendingOnStart: !config.KAFKA_BROKERS,
    });
    return {
      app: worker.app,
      async stop() {
        await worker.stop();
        await closeStorage();
      },
    };
  },
  describe: (config) => ({
    storage: STORAGE_BESIDE[sharedReadModelsKind(config) ?? 'none'],
    ttlMs: config.EXPORT_TTL,
    callbackHosts: config.EXPORT_CALLBACK_HOSTS.map((h) => `${h.scheme}://${h.host}:${h.port}`),
    erasureParticipants: config.ERASURE_PARTICIPANTS,
  }),
});
