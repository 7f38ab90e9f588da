import { serviceProcess } from '@udp/runtime';
import { createHistoryService } from './app';
import { historyConfigSchema } from './config';

/** Wiring only: configuration in, adapters chosen by it, the service out on its port. */
export const start = serviceProcess({
  name: 'history-svc',
  defaultPort: 8081,
  configSchema: historyConfigSchema,
  create: ({ adapters, config, logger }) =>
    createHistoryService({
      ...adapters,
      logger,
      readYourWritesTimeoutMs: config.READ_YOUR_WRITES_TIMEOUT_MS,
      projectionMaxLagSeconds: config.PROJECTION_MAX_LAG_S,
      maxBodyBytes: config.MAX_BODY_BYTES,
      trendingWindowMs: config.TRENDING_WINDOW_MS,
      trendingMinUsers: config.TRENDING_MIN_USERS,
      maxEntries: config.HISTORY_MAX_ENTRIES,
    }),
});
