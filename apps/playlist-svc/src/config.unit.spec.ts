import { ConfigError, loadConfig } from '@udp/config';
import { playlistConfigSchema } from './config';

describe('playlist-svc configuration', () => {
  it('has documented defaults for its limits and retries', () => {
    const config = loadConfig(playlistConfigSchema, {});
    expect([config.PLAYLIST_MAX_PLAYLISTS, config.PLAYLIST_MAX_BOOKMARKS, config.PLAYLIST_CONFLICT_RETRIES]).toEqual([100, 1000, 10]);
  });

  it('reads the limits from the environment', () => {
    const config = loadConfig(playlistConfigSchema, {
      PLAYLIST_MAX_PLAYLISTS: '5',
      PLAYLIST_MAX_BOOKMARKS: '20',
      PLAYLIST_CONFLICT_RETRIES: '0',
    });
    expect([config.PLAYLIST_MAX_PLAYLISTS, config.PLAYLIST_MAX_BOOKMARKS, config.PLAYLIST_CONFLICT_RETRIES]).toEqual([5, 20, 0]);
  });

  it('stops start-up on a wrong value, naming the variable', () => {
    expect(() => loadConfig(playlistConfigSchema, { PLAYLIST_MAX_BOOKMARKS: 'lots' })).toThrow(ConfigError);
    expect(() => loadConfig(playlistConfigSchema, { PLAYLIST_MAX_PLAYLISTS: '0' })).toThrow(/PLAYLIST_MAX_PLAYLISTS/);
  });
});
