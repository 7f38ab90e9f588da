import { commonConfigSchema } from '@udp/config';
import { serviceProcess } from '@udp/runtime';
import { createCatalogueService } from './app';

/** Wiring only: configuration in, adapters chosen by it, the service out on its port. */
export const start = serviceProcess({
  name: 'catalogue-svc',
  defaultPort: 8085,
  configSchema: commonConfigSchema,
  create: ({ adapters, config, logger }) =>
    createCatalogueService({
      ...adapters,
      logger,
      readYourWritesTimeoutMs: config.READ_YOUR_WRITES_TIMEOUT_MS,
      projectionMaxLagSeconds: config.PROJECTION_MAX_LAG_S,
    }),
});
