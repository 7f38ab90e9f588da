import type { Bus } from '@udp/bus';
import { loadConfig } from '@udp/config';
import { closeAdapters, closeServer, listen, openAdapters } from '@udp/runtime';
import { createLogger, startTracing } from '@udp/telemetry';
import { createPreferenceService } from './app';
import { preferenceConfigSchema } from './config';

const SERVICE = 'preference-svc';

/** Wiring only: configuration in, adapters chosen by it, the service out on its port. */
export async function start(env: NodeJS.ProcessEnv = process.env, shared: { bus?: Bus } = {}) {
  const config = loadConfig(preferenceConfigSchema, env);
  startTracing({ serviceName: SERVICE, otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
  const logger = createLogger(SERVICE, config.LOG_LEVEL);
  const adapters = await openAdapters(config, SERVICE, shared);
  const service = await createPreferenceService({
    ...adapters,
    logger,
    readYourWritesTimeoutMs: config.READ_YOUR_WRITES_TIMEOUT_MS,
    maxBodyBytes: config.MAX_BODY_BYTES,
    limits: {
      maxDocumentBytes: config.PREFERENCE_MAX_DOCUMENT_BYTES,
      maxKeyLength: config.PREFERENCE_MAX_KEY_LENGTH,
      maxPathDepth: config.PREFERENCE_MAX_PATH_DEPTH,
    },
    writeRetries: config.PREFERENCE_WRITE_RETRIES,
  });
  const { server, port } = await listen(service.app, config.PORT ?? 8083, config.HOST);
  logger.info({ port, ...adapters.describe }, `${SERVICE} listening`);
  return {
    port,
    /** The service's handler, for the embedded gateway to call in-process. */
    app: service.app,
    async stop() {
      await closeServer(server);
      await service.stop();
      await closeAdapters(adapters, shared);
    },
  };
}
