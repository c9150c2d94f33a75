import { Redis } from 'ioredis';
import { RedisLockStore } from '../../lib/stores/redis/redis.store.js';
import { resourceKeys } from '../../lib/stores/redis/resource-keys.js';
import { startRedisSentinel, type RedisSentinelHandle } from '../support/redis-sentinel.js';
import { uniquePrefix, type StoreKind } from '../support/stores.js';
import { describeLeadership } from './leadership.contract.js';

let group: RedisSentinelHandle;

/** Two RedisLockStores whose clients find the master through the Sentinels, as two processes would. */
const sentinelKind: StoreKind = {
  name: 'RedisLockStore through Redis Sentinel (a master, 2 replicas, 3 Sentinels)',
  async create() {
    const keyPrefix = uniquePrefix();
    const client = () => new Redis({ ...group.clientOptions, maxRetriesPerRequest: 1, commandTimeout: 2000 });
    const store = new RedisLockStore({ client: client(), keyPrefix, ownsClient: true });
    const other = new RedisLockStore({ client: client(), keyPrefix, ownsClient: true });
    const admin = client();
    return {
      store,
      other,
      async deleteLease(key) {
        await admin.del(resourceKeys(keyPrefix, key).lock);
      },
      async close() {
        await Promise.all([store.close(), other.close(), admin.quit()]);
      },
    };
  },
};

beforeAll(async () => {
  group = await startRedisSentinel();
}, 60_000);
afterAll(() => group.stop());

describeLeadership(sentinelKind);
