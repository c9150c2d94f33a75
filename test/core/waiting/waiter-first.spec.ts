import { LockManager } from '../../../lib/core/lock-manager.js';
import { MemoryLockStore } from '../../../lib/stores/memory/memory.store.js';
import { takeTurns, waiterFirst } from '../../support/taking-turns.js';

describe('a release that lets in a waiter of its own process', () => {
  it('returns to its caller only after that waiter holds the key', async () => {
    // the memory store: nothing between the release and the woken waiter's grant but this process's own work
    const locks = new LockManager({ store: new MemoryLockStore() });
    try {
      const events: string[] = [];
      locks.on('acquired', () => events.push('acquired'));
      locks.on('released', () => events.push('released'));
      const order = await takeTurns(locks, () => locks.acquire('turns', { ttl: 30_000, wait: 10_000 }));
      expect(waiterFirst(order, 0)).toEqual({ first: 7, after: 0 });
      // the events still tell each lease's end before the next holder's start
      expect(events).toEqual(Array.from({ length: 8 }, () => ['acquired', 'released']).flat());
    } finally {
      await locks.close();
    }
  });
});
