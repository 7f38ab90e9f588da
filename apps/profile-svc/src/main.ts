import { serviceProcess } from '@udp/runtime';
import { createProfileService } from './app';
import { profileConfigSchema } from './config';

/** Wiring only: configuration in, adapters chosen by it, the service out on its port. */
export const start = serviceProcess({
  name: 'profile-svc',
  defaultPort: 8084,
  configSchema: profileConfigSchema,
  create: ({ adapters, config, logger }) =>
    createProfileService({
      ...adapters,
      logger,
      readYourWritesTimeoutMs: config.READ_YOUR_WRITES_TIMEOUT_MS,
      projectionMaxLagSeconds: config.PROJECTION_MAX_LAG_S,
      maxBodyBytes: config.PROFILE_MAX_BODY_BYTES,
      publicProfilesEnabled: config.PROFILE_PUBLIC_ENABLED,
    }),
  describe: (config) => ({ publicProfiles: config.PROFILE_PUBLIC_ENABLED }),
});
