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
    expect(config.EXPORT_WORKER_URL).toBe('http://127.0.0.1:8086');
  });

  it('takes service addresses from the environment and refuses one that is not a URL, naming it', () => {
    expect(loadConfig(gatewayConfigSchema, { PROFILE_SVC_URL: 'http://profile:8084' }).PROFILE_SVC_URL).toBe('http://profile:8084');
    expect(() => loadConfig(gatewayConfigSchema, { PREFERENCE_SVC_URL: 'not a url' })).toThrow(ConfigError);
    expect(() => loadConfig(gatewayConfigSchema, { PREFERENCE_SVC_URL: 'not a url' })).toThrow(/PREFERENCE_SVC_URL/);
  });

  it('bounds the token lifetime: one day by default, a wrong value named', () => {
    expect(loadConfig(gatewayConfigSchema, {}).AUTH_MAX_TOKEN_LIFETIME_S).toBe(86400);
    expect(loadConfig(gatewayConfigSchema, { AUTH_MAX_TOKEN_LIFETIME_S: '3600' }).AUTH_MAX_TOKEN_LIFETIME_S).toBe(3600);
    expect(() => loadConfig(gatewayConfigSchema, { AUTH_MAX_TOKEN_LIFETIME_S: 'a week' })).toThrow(/AUTH_MAX_TOKEN_LIFETIME_S/);
  });

  it("trusts no caller's trace context by default; TRACE_TRUSTED_CALLERS takes addresses and CIDR ranges, a bad one named", () => {
    expect(loadConfig(gatewayConfigSchema, {}).TRACE_TRUSTED_CALLERS).toBe('');
    expect(loadConfig(gatewayConfigSchema, { TRACE_TRUSTED_CALLERS: '10.0.0.0/8, ::1,fd00::/8' }).TRACE_TRUSTED_CALLERS).toBeTruthy();
    for (const bad of ['10.0.0.0/33', 'ingress', '10.0.0.1/8/1', '::1/129'])
      expect(() => loadConfig(gatewayConfigSchema, { TRACE_TRUSTED_CALLERS: bad })).toThrow(/TRACE_TRUSTED_CALLERS/);
  });

  it('bounds live sync by its settings: the defaults, and a wrong value named', () => {
    const config = loadConfig(gatewayConfigSchema, {});
    expect([
      config.CHANGES_HEARTBEAT_S,
      config.CHANGES_MAX_STREAMS_PER_USER,
      config.CHANGES_MAX_STREAMS,
      config.CHANGES_MAX_BUFFER_BYTES,
      config.CHANGES_MAX_TICKETS,
    ]).toEqual([15, 10, 10_000, 256 * 1024, 100_000]);
    for (const [name, bad] of [
      ['CHANGES_HEARTBEAT_S', '0'],
      ['CHANGES_MAX_STREAMS_PER_USER', '0'],
      ['CHANGES_MAX_STREAMS', '-1'],
      ['CHANGES_MAX_BUFFER_BYTES', '100'],
      ['CHANGES_MAX_TICKETS', 'many'],
    ])
      expect(() => loadConfig(gatewayConfigSchema, { [name]: bad })).toThrow(new RegExp(name));
  });

  it('trusts no proxy and allows no origin by default; rate limits are on with generous defaults', () => {
    const config = loadConfig(gatewayConfigSchema, {});
    expect(config.TRUSTED_PROXIES).toBeUndefined();
    expect(config.CORS_ORIGINS).toBeUndefined();
    expect([config.RATE_LIMIT_WINDOW_S, config.RATE_LIMIT_PER_USER, config.RATE_LIMIT_PER_ADDRESS]).toEqual([10, 1000, 10_000]);
    expect(config.RATE_LIMIT_ERASURE_PER_USER).toBe(10);
  });

  it('caps connections per address below the server cap, and per trusted proxy at it; a wrong value named', () => {
    const config = loadConfig(gatewayConfigSchema, {});
    expect([config.HTTP_MAX_CONNECTIONS_PER_ADDRESS, config.HTTP_MAX_CONNECTIONS_PER_PROXY]).toEqual([1000, config.HTTP_MAX_CONNECTIONS]);
    expect(() => loadConfig(gatewayConfigSchema, { HTTP_MAX_CONNECTIONS_PER_ADDRESS: '-1' })).toThrow(/HTTP_MAX_CONNECTIONS_PER_ADDRESS/);
  });

  it('reads TRUSTED_PROXIES as addresses, CIDR ranges and named ranges, and names a wrong entry', () => {
    expect(loadConfig(gatewayConfigSchema, { TRUSTED_PROXIES: '10.0.0.0/8, fd00::/8,loopback,192.0.2.7' }).TRUSTED_PROXIES).toEqual([
      '10.0.0.0/8',
      'fd00::/8',
      'loopback',
      '192.0.2.7',
    ]);
    for (const bad of ['10.0.0.0/33', 'ingress', '10.0.0.1/8/8', 'fd00::/129', 'true', '1'])
      expect(() => loadConfig(gatewayConfigSchema, { TRUSTED_PROXIES: bad })).toThrow(/TRUSTED_PROXIES/);
  });

  it('reads CORS_ORIGINS as exact origins or * alone, and names a wrong entry', () => {
    expect(loadConfig(gatewayConfigSchema, { CORS_ORIGINS: 'https://app.example.com,http://localhost:3000' }).CORS_ORIGINS).toEqual([
      'https://app.example.com',
      'http://localhost:3000',
    ]);
    expect(loadConfig(gatewayConfigSchema, { CORS_ORIGINS: '*' }).CORS_ORIGINS).toEqual(['*']);
    for (const bad of [
      'https://app.example.com/',
      'app.example.com',
      'https://a.example/path',
      'ftp://a.example',
      '*,https://a.example',
      'null',
    ])
      expect(() => loadConfig(gatewayConfigSchema, { CORS_ORIGINS: bad })).toThrow(/CORS_ORIGINS/);
  });

  it('names a wrong rate limit', () => {
    expect(loadConfig(gatewayConfigSchema, { RATE_LIMIT_PER_USER: '0' }).RATE_LIMIT_PER_USER).toBe(0);
    expect(() => loadConfig(gatewayConfigSchema, { RATE_LIMIT_PER_ADDRESS: '-1' })).toThrow(/RATE_LIMIT_PER_ADDRESS/);
    expect(() => loadConfig(gatewayConfigSchema, { RATE_LIMIT_WINDOW_S: '0' })).toThrow(/RATE_LIMIT_WINDOW_S/);
  });
});
