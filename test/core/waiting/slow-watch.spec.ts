import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { LockNotAcquiredError } from '../../../lib/errors/lock-not-acquired.error.js';
import { LockManager } from '../../../lib/core/lock-manager.js';
import type { LockStore } from '../../../lib/interfaces/lock-store.interface.js';
import { RedisLockStore } from '../../../lib/stores/redis/redis.store.js';
import { newToken } from '../../../lib/utils/token.js';
import { testRedisUrl, uniquePrefix } from '../../support/stores.js';

/** How long the waiter's release watch takes to open here: far longer than the holder's lease. */
const WATCH_OPENS_AFTER = 6000;

/**
 * A waiter's release watch can take long to open (a subscription with a connection of its own, to a busy
 * server). A holder that crashed sends no release notice: the waiter must find the end of its lease by the
 * time the refusal gave, not by when the watch listens.
 */
describe('a waiter whose release watch is slow to open', () => {
  let prefix: string;
  const stores: RedisLockStore[] = [];
  const managers: LockManager[] = [];
  let openWatches: () => void;
  let watchesMayOpen: Promise<void>;

  beforeEach(() => {
    prefix = uniquePrefix();
    watchesMayOpen = new Promise((resolve) => (openWatches = resolve));
  });

  afterEach(async () => {
    openWatches();
    await Promise.all(managers.splice(0).map((manager) => manager.close()));
    await Promise.all(stores.splice(0).map((store) => store.close()));
  });

  function store(): RedisLockStore {
    const created = new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix: prefix, ownsClient: true });
    stores.push(created);
    return created;
  }

  /** A manager on a store whose watches open only after {@link WATCH_OPENS_AFTER} (or the test's end). */
  function waiter(): LockManager {
    const inner = store();
    const slow: LockStore = {
      acquire: (request) => inner.acquire(request),
      release: (key, token) => inner.release(key, token),
      extend: (key, token, ttl) => inner.extend(key, token, ttl),
      extendMany: (renewals) => inner.extendMany(renewals),
      inspect: (key) => inner.inspect(key),
      watch: async (key, since) => {
        await Promise.race([watchesMayOpen, new Promise((resolve) => setTimeout(resolve, WATCH_OPENS_AFTER))]);
        return inner.watch(key, since);
      },
      close: async () => undefined,
    };
    const created = new LockManager({ store: slow });
    managers.push(created);
    return created;
  }

  it("takes a crashed holder's key when its lease ends, without waiting for the watch", async () => {
    // the holder takes the key and is gone: no release, no notice
    await store().acquire({ key: 'crashed', token: newToken(), ttl: 300, fencing: false });
    const started = performance.now();
    const lock = await waiter().acquire('crashed', { wait: 10_000, ttl: 5000 });
    const waited = performance.now() - started;
    await lock.release();
    // the lease ended 300 ms in; the rest is room for a busy machine, well short of the watch's 6 s
    expect(waited).toBeLessThan(WATCH_OPENS_AFTER / 2);
  });

  it('is refused when its wait ends, not when the watch opens', async () => {
    await store().acquire({ key: 'held', token: newToken(), ttl: 20_000, fencing: false });
    const started = performance.now();
    await expect(waiter().acquire('held', { wait: 500 })).rejects.toBeInstanceOf(LockNotAcquiredError);
    expect(performance.now() - started).toBeLessThan(WATCH_OPENS_AFTER / 2);
  });
});
