import { commonConfigSchema } from '@udp/config';
import { serviceProcess } from '@udp/runtime';
import { createHistoryService } from './app';

/** Wiring only: configuration in, adapters chosen by it, the service out on its port. */
export const start = serviceProcess({
  name: 'history-svc',
  defaultPort: 8081,
  configSchema: commonConfigSchema,
  create: ({ adapters, config, logger }) =>
    createHistoryService({
      ...adapters,
      logger,
      readYourWritesTimeoutMs: config.READ_YOUR_WRITES_TIMEOUT_MS,
      maxBodyBytes: config.MAX_BODY_BYTES,
    }),
});
