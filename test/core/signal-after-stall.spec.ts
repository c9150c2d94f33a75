import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LockLostError, LockManager, RedisLockStore, type Leadership } from '../../lib/index.js';
import { blockEventLoop } from '../support/faults.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';

/**
 * After a stall (a blocked event loop, a frozen process), the timers that fell due during it run in the order
 * they were due: the holder's own before the renewal timer that would find the lease gone. The signal tells
 * the loss to whoever reads it then, so the loop the docs show (check the signal, then write) stops there.
 */
describe('a lease signal read right after a stall past the validity', () => {
  let manager: LockManager;

  beforeEach(() => {
    const store = new RedisLockStore({
      client: new Redis(testRedisUrl()),
      keyPrefix: uniquePrefix(),
      ownsClient: true,
    });
    manager = new LockManager({ store });
  });

  afterEach(() => manager.close());

  it('is aborted already in the first timer that runs after the stall, and so is a leadership term', async () => {
    const seen: Array<{ what: string; aborted: boolean; isHeld: boolean }> = [];
    const term = await new Promise<Leadership>((resolve) => {
      void manager.lead(
        'relay',
        (leadership) => {
          resolve(leadership);
          return new Promise((done) => leadership.signal.addEventListener('abort', done, { once: true }));
        },
        { ttl: 300 },
      );
    });
    const lock = await manager.acquire('report', { ttl: 300, autoRenew: true });
    const { signal } = lock;
    // the holders' own timers, due before the renewal timer's next run; set just before the stall
    setTimeout(() => seen.push({ what: 'term', aborted: term.signal.aborted, isHeld: term.isLeader }), 5);
    setTimeout(() => seen.push({ what: 'lock', aborted: signal.aborted, isHeld: lock.isHeld }), 5);
    blockEventLoop(600);
    await sleep(20);

    expect(seen).toEqual([
      { what: 'term', aborted: true, isHeld: false },
      { what: 'lock', aborted: true, isHeld: false },
    ]);
    expect(signal.reason).toBeInstanceOf(LockLostError);
    expect((signal.reason as LockLostError).reason).toBe('stalled');
    await lock.release();
  }, 30_000);
});
