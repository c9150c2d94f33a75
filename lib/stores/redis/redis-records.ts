import type { RedisClientPort } from './client/redis-client-port.js';
import type { ResponseRecords } from '../../interfaces/response-records.interface.js';
import { unreachableServer } from './connection-failure.js';
import { redisStoreError } from './store-error.js';

/**
 * Response records in Redis, one string key each (`<keyPrefix>record:<key>`) with its ttl on the server: one
 * command per operation on one key, so a Cluster serves each from that key's slot and Sentinel from the master.
 */
export class RedisRecords implements ResponseRecords {
  constructor(
    private readonly client: RedisClientPort,
    private readonly prefix: string,
  ) {}

  async put(key: string, value: string, ttl: number): Promise<boolean> {
    const reply = await this.call('keep a response under', key, () =>
      this.client.set(this.nameOf(key), value, 'PX', Math.max(1, Math.ceil(ttl)), 'NX'),
    );
    return reply === 'OK';
  }

  async get(key: string): Promise<string | undefined> {
    const value = await this.call('read the response under', key, () => this.client.get(this.nameOf(key)));
    return value ?? undefined;
  }

  async delete(key: string): Promise<void> {
    await this.call('delete the response under', key, () => this.client.del(this.nameOf(key)));
  }

  private nameOf(key: string): string {
    return `${this.prefix}record:${key}`;
  }

  private async call<T>(operation: string, key: string, command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (error) {
      const unreachable = unreachableServer(this.client, error);
      throw redisStoreError(operation, key, unreachable?.cause ?? error, unreachable?.detail);
    }
  }
}
