import type { Bus } from '@udp/bus';
import { commonConfigSchema, loadConfig } from '@udp/config';
import { closeAdapters, closeServer, listen, openAdapters } from '@udp/runtime';
import { createLogger, startTracing } from '@udp/telemetry';
import { createCatalogueService } from './app';

const SERVICE = 'catalogue-svc';

/** Wiring only: configuration in, adapters chosen by it, the service out on its port. */
export async function start(env: NodeJS.ProcessEnv = process.env, shared: { bus?: Bus } = {}) {
  const config = loadConfig(commonConfigSchema, env);
  startTracing({ serviceName: SERVICE, otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
  const logger = createLogger(SERVICE, config.LOG_LEVEL);
  const adapters = await openAdapters(config, SERVICE, shared);
  const service = await createCatalogueService({ ...adapters, logger, readYourWritesTimeoutMs: config.READ_YOUR_WRITES_TIMEOUT_MS });
  const { server, port } = await listen(service.app, config.PORT ?? 8085, config.HOST);
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
