import { Redis } from 'ioredis';
import { LockManager } from '../../../lib/core/lock-manager.js';
import type { ReleaseWatch } from '../../../lib/interfaces/lease.interface.js';
import type { RedisPermitStore } from '../../../lib/stores/redis/permits/redis-permit-store.js';
import { RedisLockStore } from '../../../lib/stores/redis/redis.store.js';
import { testRedisUrl, uniquePrefix } from '../../support/stores.js';

/**
 * A writer refused while readers hold the key waits first in line. Its release watch opens only after its first
 * refusal (its subscription on a busy server can take a while), so the release that frees the key for it may
 * find nobody of its process listening yet: it must still be the writer's turn, not the next reader's.
 */
const KEY = 'catalog';
/** Long enough that the writer's reserved turn does not lapse while its watch is held back. */
const HANDOFF_WINDOW = 10_000;

describe('a waiting writer whose release watch opens late', () => {
  const managers: LockManager[] = [];
  let keyPrefix: string;
  let inner: RedisLockStore;
  /** Lets the writer's held-back watch open (also when a test failed before it did). */
  let openWatch = (): void => undefined;

  afterEach(async () => {
    openWatch();
    await Promise.all(managers.splice(0).map((manager) => manager.close()));
    await inner.close();
  });

  // every process's window: the releaser's reserves the writer's turn, and it must not lapse on a loaded machine
  function manager(
    store = new RedisLockStore({
      client: new Redis(testRedisUrl()),
      keyPrefix,
      ownsClient: true,
      handoffWindow: HANDOFF_WINDOW,
    }),
  ) {
    const locks = new LockManager({ store });
    managers.push(locks);
    return locks;
  }

  it('is not overtaken by a reader that comes after the release, and gets the key', async () => {
    keyPrefix = uniquePrefix();
    inner = new RedisLockStore({
      client: new Redis(testRedisUrl()),
      keyPrefix,
      ownsClient: true,
      handoffWindow: HANDOFF_WINDOW,
    });
    const permits = inner.capabilities.permits as RedisPermitStore;
    const watchMayOpen = new Promise<void>((resolve) => (openWatch = resolve));
    let watchAsked!: () => void;
    const watchWanted = new Promise<void>((resolve) => (watchAsked = resolve));
    const slowWatch = Object.assign(Object.create(permits) as RedisPermitStore, {
      watch: async (key: string, since?: number, token?: string): Promise<ReleaseWatch> => {
        watchAsked();
        await watchMayOpen;
        return permits.watch(key, since, token);
      },
    });
    const writers = new LockManager({
      store: Object.assign(Object.create(inner) as RedisLockStore, {
        capabilities: { ...inner.capabilities, permits: slowWatch },
      }),
      closeStore: false,
    });
    managers.push(writers);
    const [holders, readers] = [manager(), manager()];

    const reading = await holders.acquire(KEY, { mode: 'read', ttl: 30_000, autoRenew: false });
    const writing = writers.acquire(KEY, { mode: 'write', wait: 20_000, ttl: 30_000, autoRenew: false });
    // refused, and about to open its watch
    await watchWanted;
    await reading.release();
    // the key is the writer's now: a reader that comes later is refused
    expect(await readers.tryAcquire(KEY, { mode: 'read', ttl: 30_000, autoRenew: false })).toBeNull();
    openWatch();
    const writer = await writing;
    expect(writer.isHeld).toBe(true);
    await writer.release();
  });
});
