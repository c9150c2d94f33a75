import { LockLostError } from '../../../lib/errors/lock-lost.error.js';
import { LockStoreError } from '../../../lib/errors/lock-store.error.js';
import { LockManager } from '../../../lib/core/lock-manager.js';
import type { PermitStore } from '../../../lib/interfaces/permit-store.interface.js';
import { memoryCapableKind, type CapableStore } from '../../support/capable-stores.js';

/** Resolves after `ms` milliseconds. */
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `check` holds, asking every few ms (for state only another party changes). */
async function until(check: () => Promise<boolean>, timeout = 3000): Promise<void> {
  const deadline = Date.now() + timeout;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

describe('the life of a permit', () => {
  let capable: CapableStore;
  let permits: PermitStore;
  let locks: LockManager;

  beforeEach(async () => {
    capable = await memoryCapableKind.create();
    permits = capable.store.capabilities.permits;
    locks = new LockManager({ store: capable.store, closeStore: false, drainTimeout: 0 });
  });

  afterEach(async () => {
    await locks.close();
    await capable.close();
  });

  it('gives back a permit granted after its validity and asks again, as for a mutex', async () => {
    const acquire = permits.acquire.bind(permits);
    let delayed = false;
    // the first reply comes back after the permit's ttl: a grant nobody may use
    permits.acquire = async (request) => {
      const result = await acquire(request);
      if (!delayed) await sleep(request.ttl + 20);
      delayed = true;
      return result;
    };
    const late: boolean[] = [];
    locks.on('late-grant', (event) => late.push(event.retrying));
    const lock = await locks.acquire('late', { limit: 2, ttl: 100, wait: '2s' });
    expect(late).toEqual([true]);
    expect(lock.isHeld).toBe(true);
    expect((await permits.inspect('late')).holders).toBe(1);
    await lock.release();
  });

  it("aborts a permit's signal when the store no longer has it, and never frees another holder's permit", async () => {
    const [mine, theirs] = await Promise.all([1, 2].map(() => locks.acquire('lost', { limit: 2 })));
    const lost: string[] = [];
    locks.on('lost', (event) => lost.push(event.reason));
    // an operator ended our permit behind our back
    await permits.release('lost', mine.token);
    await expect(mine.extend()).rejects.toBeInstanceOf(LockLostError);
    expect(mine.signal.aborted).toBe(true);
    expect(lost).toEqual(['taken']);
    expect(await mine.release()).toBe(false);
    expect(theirs.isHeld).toBe(true);
    expect((await permits.inspect('lost')).holders).toBe(1);
    await theirs.release();
  });

  it('refuses a waiting permit at shutdown with LockStoreError, and gives its place in the line up', async () => {
    const held = await locks.acquire('closing', { mode: 'write' });
    const waiter = locks.acquire('closing', { mode: 'read', wait: '10s' });
    await until(async () => (await permits.inspect('closing')).waiting === 1);
    const closed = locks.close();
    await expect(waiter).rejects.toBeInstanceOf(LockStoreError);
    await closed;
    // the holder was asked to stop, and keeps its permit until it lets go
    expect(held.signal.reason).toMatchObject({ code: 'LOCK_LOST', reason: 'shutdown' });
    expect(held.isHeld).toBe(true);
    expect(await permits.inspect('closing')).toMatchObject({ held: true, waiting: 0 });
    await held.release();
    expect(await permits.inspect('closing')).toMatchObject({ held: false, waiting: 0 });
  });
});
