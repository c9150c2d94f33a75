// A process whose waiters stand in a key's line, for crashed-waiters.spec.ts: COUNT acquisitions of KEY with
// SHAPE (a permit's `limit` or `mode`, as JSON), each waiting up to WAIT ms. It prints "asked" once every one is
// on its way; the test SIGKILLs it while they wait, or it exits when the test process closes its stdin.
import { Redis } from 'ioredis';
import { LockManager } from '../../lib/core/lock-manager.js';
import { RedisLockStore } from '../../lib/stores/redis/redis.store.js';

const { REDIS_URL, KEY_PREFIX, KEY, SHAPE, COUNT, WAIT } = process.env as Record<string, string>;

const store = new RedisLockStore({ client: new Redis(REDIS_URL), keyPrefix: KEY_PREFIX, ownsClient: true });
await store.verify();
const locks = new LockManager({ store });
const shape = JSON.parse(SHAPE) as { limit: number } | { mode: 'read' | 'write' };
for (let i = 0; i < Number(COUNT); i++) {
  // refused at the end of the wait, long after the test killed us
  void locks.acquire(KEY, { ...shape, wait: Number(WAIT) }).catch(() => undefined);
}
console.log('asked');
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
