import { Redis } from 'ioredis';
import type { FencedWrite, Storage } from './storage.js';

/**
 * Appends unless the list has seen a higher fence. KEYS: highest fence, list. ARGV: fence, value.
 * Returns {1 accepted or 0 refused, highest fence}.
 */
const APPEND_FENCED = `
local highest = tonumber(redis.call('GET', KEYS[1]) or '0')
-- a writer whose lease was taken over comes back with a lower fence: refuse it
if tonumber(ARGV[1]) < highest then return {0, highest} end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('RPUSH', KEYS[2], ARGV[2])
return {1, tonumber(ARGV[1])}
`;

/** {@link Storage} in Redis, every key under the sample's prefix. */
export class RedisStorage implements Storage {
  private readonly client: Redis;

  constructor(url: string, keyPrefix: string) {
    this.client = new Redis(url, { keyPrefix, maxRetriesPerRequest: 1 });
    this.client.on('error', () => undefined);
  }

  get(key: string): Promise<string | null> {
    return this.client.get(key);
  }

  async set(values: Record<string, string>): Promise<void> {
    await this.client.mset(values);
  }

  async append(key: string, value: string): Promise<void> {
    await this.client.rpush(key, value);
  }

  list(key: string): Promise<string[]> {
    return this.client.lrange(key, 0, -1);
  }

  async appendFenced(key: string, fence: number, value: string): Promise<FencedWrite> {
    const [accepted, highest] = (await this.client.eval(APPEND_FENCED, 2, `${key}:fence`, key, fence, value)) as [
      number,
      number,
    ];
    return { accepted: accepted === 1, highest };
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
