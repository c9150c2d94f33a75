import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LockManager } from '../../../lib/core/lock-manager.js';
import { LockStoreError } from '../../../lib/errors/lock-store.error.js';
import type { PermitRequest, PermitResult, PermitState } from '../../../lib/interfaces/permit-store.interface.js';
import type { RedisPermitStore } from '../../../lib/stores/redis/permits/redis-permit-store.js';
import { RedisLockStore } from '../../../lib/stores/redis/redis.store.js';
import { resourceKeys } from '../../../lib/stores/redis/resource-keys.js';
import { testRedisUrl, uniquePrefix } from '../../support/stores.js';

/**
 * A permit acquisition that gives up gives up its place in the key's line too, also when its first request
 * failed after the store took it, or went unanswered until after the wait: a place left there holds back the
 * waiters behind it, and a release grants it a permit nobody holds, for the permit's whole ttl.
 */
const KEY = 'report';
const PERMIT = { limit: 1, ttl: 30_000, autoRenew: false } as const;

/** Resolves once `check()` holds, looking every few ms (it watches state that other parties change). */
async function until(check: () => Promise<boolean>, what: string, limit = 10_000): Promise<void> {
  const end = performance.now() + limit;
  while (!(await check())) {
    if (performance.now() > end) throw new Error(`${what} did not happen within ${limit} ms`);
    await sleep(10);
  }
}

/** How many waiters of the store's process have a direct grant on its way to them or taken by nobody. */
function pendingGrants(permits: RedisPermitStore): number {
  return (permits as unknown as { grants: { waiters: Map<string, unknown> } }).grants.waiters.size;
}

describe('a permit acquisition that gives up after its first request failed or went unanswered', () => {
  let keyPrefix: string;
  let admin: Redis;
  let inner: RedisLockStore;
  let permits: RedisPermitStore;
  /** What the waiter's next permit request does instead of going straight to the store, once. */
  let trap: ((request: PermitRequest) => Promise<PermitResult>) | undefined;
  let waiter: LockManager;
  let holder: LockManager;
  let holderStore: RedisLockStore;

  const state = (): Promise<PermitState> => permits.inspect(KEY);

  beforeEach(async () => {
    keyPrefix = uniquePrefix();
    admin = new Redis(testRedisUrl());
    inner = new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix, ownsClient: true });
    permits = inner.capabilities.permits as RedisPermitStore;
    const trapped = Object.assign(Object.create(permits) as RedisPermitStore, {
      acquire: (request: PermitRequest) => {
        const take = trap;
        trap = undefined;
        return take ? take(request) : permits.acquire(request);
      },
    });
    waiter = new LockManager({
      store: Object.assign(Object.create(inner) as RedisLockStore, {
        capabilities: { ...inner.capabilities, permits: trapped },
      }),
      closeStore: false,
    });
    holderStore = new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix, ownsClient: true });
    holder = new LockManager({ store: holderStore });
  });

  afterEach(async () => {
    trap = undefined;
    await waiter.close();
    await inner.close();
    await holder.close();
    await admin.quit();
  });

  /**
   * The key held by another process, and a first waiter of ours in its line with its watch open: our process
   * hears its own channel, so the next request of ours leaves an offer that a release grants directly.
   */
  async function heldWithOneWaiter() {
    const held = await holder.acquire(KEY, PERMIT);
    const first = waiter.acquire(KEY, { ...PERMIT, wait: 30_000 });
    const ownChannels = `${resourceKeys(keyPrefix, KEY).channel}:*`;
    await until(
      async () => (await admin.pubsub('CHANNELS', ownChannels)).length === 1 && (await state()).waiting === 1,
      'the first waiter in line, listening',
    );
    return { held, first };
  }

  it('leaves the place of a first request that failed after the store took it', async () => {
    const { held, first } = await heldWithOneWaiter();
    trap = async (request) => {
      expect(await permits.acquire(request)).toMatchObject({ acquired: false, ahead: 1 });
      throw new Error('the connection closed before the reply came');
    };
    const failed = await waiter.acquire(KEY, { ...PERMIT, wait: 30_000 }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(LockStoreError);
    // its place (good for its whole wait of 30 s) goes: only the first waiter stands in line
    await until(async () => (await state()).waiting === 1 && (await state()).holders === 1, 'the place given up');
    await held.release();
    await (await first).release();
    // nothing was granted to the place given up: the key is free, and no grant is kept for it here
    expect(await state()).toMatchObject({ holders: 0, waiting: 0 });
    expect(pendingGrants(permits)).toBe(0);
  });

  it('leaves the place of a first request answered only after the wait, and ends the permit granted to it', async () => {
    const { held, first } = await heldWithOneWaiter();
    let send!: () => void;
    const gate = new Promise<void>((resolve) => (send = resolve));
    let answered!: () => void;
    const answer = new Promise<void>((resolve) => (answered = resolve));
    // held back until after the acquisition gave up (its wait is 1 s), then taken by the store and answered
    trap = async (request) => {
      await gate;
      const result = await permits.acquire(request);
      answered();
      return result;
    };
    const unanswered = await waiter.acquire(KEY, { ...PERMIT, wait: 1000 }).catch((error: unknown) => error);
    expect(unanswered).toBeInstanceOf(LockStoreError);
    await held.release();
    const granted = await first;
    // the request left behind takes a place behind our holder now, after the acquisition gave up
    send();
    await answer;
    // our holder's release grants that place its permit directly, unless it was given up first
    await granted.release();
    await until(async () => {
      const { holders, waiting } = await state();
      return holders === 0 && waiting === 0;
    }, 'the place given up and its permit ended');
    expect(pendingGrants(permits)).toBe(0);
  });
});
