import { SampleConfig } from '../../sample/config/sample-config.js';
import { freePort } from '../support/redis-server.js';
import { testRedisUrl } from '../support/stores.js';

describe('SampleConfig.fromEnvironment', () => {
  it('takes REDIS_URL, PORT, INSTANCE_ID, LOCKS and KEY_PREFIX from the environment', async () => {
    const config = await SampleConfig.fromEnvironment({
      REDIS_URL: 'redis://redis.internal:6380',
      PORT: '8080',
      INSTANCE_ID: 'web-1',
      LOCKS: 'off',
      KEY_PREFIX: 'shop:',
    });
    expect({ ...config }).toEqual({
      redisUrl: 'redis://redis.internal:6380',
      port: 8080,
      instanceId: 'web-1',
      locks: false,
      keyPrefix: 'shop:',
    });
  });

  it('without REDIS_URL, uses a local Redis that answers PING', async () => {
    const config = await SampleConfig.fromEnvironment({}, testRedisUrl());
    expect(config).toMatchObject({ redisUrl: testRedisUrl(), port: 3000, locks: true, keyPrefix: 'sample:' });
  });

  it('without REDIS_URL and with nothing listening locally, falls back to memory within a second', async () => {
    const started = Date.now();
    const config = await SampleConfig.fromEnvironment({}, `redis://127.0.0.1:${await freePort()}`);
    expect(config.redisUrl).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('refuses a LOCKS or PORT it cannot use, naming the variable', async () => {
    await expect(SampleConfig.fromEnvironment({ REDIS_URL: 'redis://x', LOCKS: 'maybe' })).rejects.toThrow(/LOCKS/);
    await expect(SampleConfig.fromEnvironment({ REDIS_URL: 'redis://x', PORT: 'http' })).rejects.toThrow(/PORT/);
  });
});
