import type { Express } from 'express';
import type { InternalReads } from '@udp/http-kit';
import type { ServiceApp } from './service-parts';
import type { Bus } from '@udp/bus';
import { type CommonConfig, loadConfig, type z } from '@udp/config';
import { createLogger, startTelemetry, type Logger } from '@udp/telemetry';
import { type Adapters, closeAdapters, openAdapters } from './adapters';
import { closeServer, listen, serverLimitsOf } from './server';

/** What makes a service itself; the rest of running it is the same for every service. */
export interface ServiceDefinition<S extends z.ZodType<CommonConfig>> {
  name: string;
  defaultPort: number;
  configSchema: S;
  create(context: { adapters: Adapters; config: z.infer<S>; logger: Logger }): Promise<ServiceApp>;
  /** Settings worth a line in the start-up log (limits, switches). */
  describe?(config: z.infer<S>): Record<string, unknown>;
}

export interface RunningService {
  port: number;
  /** How long a stop may take (SHUTDOWN_TIMEOUT_MS). */
  shutdownTimeoutMs: number;
  /** The service's handler, for the embedded gateway to call in-process. */
  app: Express;
  /** Its internal reads, for the embedded gateway to call in process. */
  internal?: InternalReads;
  stop(): Promise<void>;
}

/**
 * A service's `start`: configuration from the environment, traces and metrics, adapters chosen by the configuration,
 * the service on its port, and a `stop` that closes everything in reverse order.
 */
export function serviceProcess<S extends z.ZodType<CommonConfig>>(definition: ServiceDefinition<S>) {
  return async function start(env: NodeJS.ProcessEnv = process.env, shared: { bus?: Bus } = {}): Promise<RunningService> {
    const config = loadConfig(definition.configSchema, env);
    const limits = serverLimitsOf(config);
    startTelemetry({ serviceName: definition.name, otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
    const logger = createLogger(definition.name, config.LOG_LEVEL);
    const adapters = await openAdapters(config, definition.name, shared, logger);
    const service = await definition.create({ adapters, config, logger });
    const { server, port } = await listen(service.app, config.PORT ?? definition.defaultPort, config.HOST, limits, logger);
    logger.info({ port, ...adapters.describe, ...definition.describe?.(config) }, `${definition.name} listening`);
    return {
      port,
      shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
      app: service.app,
      internal: service.internal,
      async stop() {
        await closeServer(server);
        await service.stop();
        await closeAdapters(adapters, shared);
      },
    };
  };
}
