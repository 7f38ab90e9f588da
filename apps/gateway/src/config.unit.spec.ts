import { ConfigError, loadConfig } from '@udp/config';
import { gatewayConfigSchema } from './config';

describe('gateway config', () => {
  it('points at every service on its default port', () => {
    const config = loadConfig(gatewayConfigSchema, {});
    expect(config.HISTORY_SVC_URL).toBe('http://127.0.0.1:8081');
    expect(config.PLAYLIST_SVC_URL).toBe('http://127.0.0.1:8082');
    expect(config.PREFERENCE_SVC_URL).toBe('http://127.0.0.1:8083');
    expect(config.PROFILE_SVC_URL).toBe('http://127.0.0.1:8084');
    expect(config.CATALOGUE_SVC_URL).toBe('http://127.0.0.1:8085');
  });

  it('takes service addresses from the environment and refuses one that is not a URL, naming it', () => {
    expect(loadConfig(gatewayConfigSchema, { PROFILE_SVC_URL: 'http://profile:8084' }).PROFILE_SVC_URL).toBe('http://profile:8084');
    expect(() => loadConfig(gatewayConfigSchema, { PREFERENCE_SVC_URL: 'not a url' })).toThrow(ConfigError);
    expect(() => loadConfig(gatewayConfigSchema, { PREFERENCE_SVC_URL: 'not a url' })).toThrow(/PREFERENCE_SVC_URL/);
  });
});
