import type { Bus } from '@udp/bus';
import { loadConfig } from '@udp/config';
import { closeAdapters, closeServer, listen, openAdapters } from '@udp/runtime';
import { createLogger, startTracing } from '@udp/telemetry';
import { createPlaylistService } from './app';
import { playlistConfigSchema } from './config';

const SERVICE = 'playlist-svc';

/** Wiring only: configuration in, adapters chosen by it, the service out on its port. */
export async function start(env: NodeJS.ProcessEnv = process.env, shared: { bus?: Bus } = {}) {
  const config = loadConfig(playlistConfigSchema, env);
  startTracing({ serviceName: SERVICE, otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
  const logger = createLogger(SERVICE, config.LOG_LEVEL);
  const adapters = await openAdapters(config, SERVICE, shared);
  const service = await createPlaylistService({
    ...adapters,
    logger,
    limits: { maxPlaylists: config.PLAYLIST_MAX_PLAYLISTS, maxBookmarks: config.PLAYLIST_MAX_BOOKMARKS },
    conflictRetries: config.PLAYLIST_CONFLICT_RETRIES,
    readYourWritesTimeoutMs: config.READ_YOUR_WRITES_TIMEOUT_MS,
    maxBodyBytes: config.MAX_BODY_BYTES,
  });
  const { server, port } = await listen(service.app, config.PORT ?? 8082, config.HOST);
  logger.info({ port, ...adapters.describe, limits: { maxPlaylists: config.PLAYLIST_MAX_PLAYLISTS, maxBookmarks: config.PLAYLIST_MAX_BOOKMARKS } }, `${SERVICE} listening`);
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
