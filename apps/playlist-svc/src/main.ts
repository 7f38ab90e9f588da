import { serviceProcess } from '@udp/runtime';
import { createPlaylistService } from './app';
import { playlistConfigSchema } from './config';

/** Wiring only: configuration in, adapters chosen by it, the service out on its port. */
export const start = serviceProcess({
  name: 'playlist-svc',
  defaultPort: 8082,
  configSchema: playlistConfigSchema,
  create: ({ adapters, config, logger }) =>
    createPlaylistService({
      ...adapters,
      logger,
      limits: { maxPlaylists: config.PLAYLIST_MAX_PLAYLISTS, maxBookmarks: config.PLAYLIST_MAX_BOOKMARKS },
      conflictRetries: config.PLAYLIST_CONFLICT_RETRIES,
      readYourWritesTimeoutMs: config.READ_YOUR_WRITES_TIMEOUT_MS,
      projectionMaxLagSeconds: config.PROJECTION_MAX_LAG_S,
      maxBodyBytes: config.MAX_BODY_BYTES,
    }),
  describe: (config) => ({ limits: { maxPlaylists: config.PLAYLIST_MAX_PLAYLISTS, maxBookmarks: config.PLAYLIST_MAX_BOOKMARKS } }),
});
