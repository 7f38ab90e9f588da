import { ConfigError, loadConfig } from '@udp/config';
import { exportConfigSchema } from './config';

describe('export-worker config', () => {
  it('has the documented defaults', () => {
    const config = loadConfig(exportConfigSchema, {});
    expect(config.EXPORT_TTL).toBe(7 * 86_400_000);
    expect(config.EXPORT_CALLBACK_HOSTS).toEqual([]);
    expect(config.ERASURE_PARTICIPANTS).toEqual(['history-svc', 'playlist-svc', 'preference-svc', 'profile-svc', 'export-worker']);
    expect(config.HISTORY_SVC_URL).toBe('http://127.0.0.1:8081');
    expect(config.ERASURE_RESUME_INTERVAL_MS).toBe(30_000);
  });

  it('reads durations, callback hosts and participants', () => {
    const config = loadConfig(exportConfigSchema, {
      EXPORT_TTL: '12h',
      EXPORT_CALLBACK_HOSTS: 'a.example, http://10.0.0.2:8080',
      ERASURE_PARTICIPANTS: 'history-svc, export-worker',
    });
    expect(config.EXPORT_TTL).toBe(12 * 3_600_000);
    expect(config.EXPORT_CALLBACK_HOSTS).toEqual([
      { scheme: 'https', host: 'a.example', port: 443 },
      { scheme: 'http', host: '10.0.0.2', port: 8080 },
    ]);
    expect(config.ERASURE_PARTICIPANTS).toEqual(['history-svc', 'export-worker']);
    expect(loadConfig(exportConfigSchema, { EXPORT_TTL: '90000' }).EXPORT_TTL).toBe(90_000);
  });

  it('refuses wrong values, naming the variable', () => {
    for (const [name, value] of [
      ['EXPORT_TTL', 'a week'],
      ['EXPORT_CALLBACK_HOSTS', 'http://no-port.example'],
      ['EXPORT_CALLBACK_SECRET', 'short'],
      ['EXPORT_PUBLIC_BASE_URL', 'nope'],
    ]) {
      expect(() => loadConfig(exportConfigSchema, { [name]: value })).toThrow(ConfigError);
      expect(() => loadConfig(exportConfigSchema, { [name]: value })).toThrow(new RegExp(name));
    }
  });
});
