import { ConfigError, commonConfigSchema, loadConfig } from './index';

describe('loadConfig', () => {
  it('applies defaults, with no server configured', () => {
    const config = loadConfig(commonConfigSchema, {});
    expect(config).toMatchObject({ DATA_DIR: './data', HOST: '0.0.0.0', LOG_LEVEL: 'info', MAX_BODY_BYTES: 4 * 1024 * 1024 });
    expect([config.EVENTSTORE_URL, config.MONGO_URL, config.KAFKA_BROKERS]).toEqual([undefined, undefined, undefined]);
  });

  it('parses server settings', () => {
    const config = loadConfig(commonConfigSchema, { KAFKA_BROKERS: 'a:9092, b:9092', MONGO_URL: 'mongodb://m', PORT: '9000' });
    expect(config.KAFKA_BROKERS).toEqual(['a:9092', 'b:9092']);
    expect(config.PORT).toBe(9000);
    expect(config.MONGO_URL).toBe('mongodb://m');
  });

  it('stops with a message naming every wrong setting', () => {
    expect(() => loadConfig(commonConfigSchema, { PORT: 'eighty', LOG_LEVEL: 'loud', INTERNAL_AUTH_SECRET: 'short' })).toThrow(ConfigError);
    try {
      loadConfig(commonConfigSchema, { PORT: 'eighty', LOG_LEVEL: 'loud', INTERNAL_AUTH_SECRET: 'short' });
    } catch (error) {
      expect((error as Error).message).toMatch(/PORT/);
      expect((error as Error).message).toMatch(/LOG_LEVEL/);
      expect((error as Error).message).toMatch(/INTERNAL_AUTH_SECRET must be at least 32 characters/);
    }
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig(commonConfigSchema, { MONGO_URL: '' }).MONGO_URL).toBeUndefined();
  });
});
