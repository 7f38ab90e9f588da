import { serviceProcess } from '@udp/runtime';
import { createPreferenceService } from './app';
import { preferenceConfigSchema } from './config';

/** Wiring only: configuration in, adapters chosen by it, the service out on its port. */
export const start = serviceProcess({
  name: 'preference-svc',
  defaultPort: 8083,
  configSchema: preferenceConfigSchema,
  create: ({ adapters, config, logger }) =>
    createPreferenceService({
      ...adapters,
      logger,
      readYourWritesTimeoutMs: config.READ_YOUR_WRITES_TIMEOUT_MS,
      projectionMaxLagSeconds: config.PROJECTION_MAX_LAG_S,
      maxBodyBytes: config.MAX_BODY_BYTES,
      limits: {
        maxDocumentBytes: config.PREFERENCE_MAX_DOCUMENT_BYTES,
        maxKeyLength: config.PREFERENCE_MAX_KEY_LENGTH,
        maxPathDepth: config.PREFERENCE_MAX_PATH_DEPTH,
        maxJsonPathSteps: config.PREFERENCE_MAX_JSONPATH_STEPS,
        maxJsonPathResultBytes: config.PREFERENCE_MAX_JSONPATH_RESULT_BYTES,
        maxKeys: config.PREFERENCE_MAX_KEYS,
        maxUserBytes: config.PREFERENCE_MAX_USER_BYTES,
      },
      writeRetries: config.PREFERENCE_WRITE_RETRIES,
    }),
});
