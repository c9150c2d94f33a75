import { performance } from 'node:perf_hooks';
import type { LockLostReason } from '../errors/lock-lost.error.js';
import { LeaseRenewer } from './lease-renewer.js';
import { Lock, type LeaseController } from './lock.js';
import { MemoryLockStore } from '../stores/memory/memory.store.js';
import { newToken } from '../utils/token.js';
import { blockEventLoop } from '../../test/support/faults.js';

const controller: LeaseController = {
  extend: async () => undefined,
  release: async () => true,
  drift: () => 0,
  overdue: () => undefined,
};

/** A lease of `ttl` ms granted long enough ago that only `left` ms of its validity remain. */
function leaseWith(left: number, ttl = 30_000): Lock {
  return new Lock(
    { key: 'k', token: newToken(), ttl, fence: undefined, sentAt: performance.now() - ttl + left },
    controller,
  );
}

describe('LeaseRenewer', () => {
  let renewer: LeaseRenewer;
  let lost: Promise<LockLostReason>;

  beforeEach(() => {
    let report!: (reason: LockLostReason) => void;
    lost = new Promise((resolve) => (report = resolve));
    renewer = new LeaseRenewer(new MemoryLockStore(), (_lock, reason) => report(reason));
  });

  afterEach(() => renewer.stop());

  it('calls a lease lost to a stall when its check was due in time and the blocked event loop ran it late', async () => {
    renewer.add(leaseWith(100), 'renew');
    blockEventLoop(300);
    expect(await lost).toBe('stalled');
  });

  it('calls a lease expired, not stalled, when it came with less validity than a timer takes to fire', async () => {
    // no stall happened: the lease was over before any check could run. No validity at all: with 0.2 ms left
    // (as this test had), a timer that fired within those 0.2 ms renewed it, and the renewal of a lease the
    // store never had said 'taken'
    renewer.add(leaseWith(0), 'renew');
    expect(await lost).toBe('expired');
  });

  it('calls a lease lost to a stall when its renewal was answered in time and read only after the stall', async () => {
    const store = new MemoryLockStore();
    let renewalSent!: () => void;
    const sent = new Promise<void>((resolve) => (renewalSent = resolve));
    let answer!: () => void;
    store.extendMany = (renewals) => {
      renewalSent();
      return new Promise((resolve) => (answer = () => resolve(renewals.map(() => true))));
    };
    let report!: (reason: LockLostReason) => void;
    const lostToo = new Promise<LockLostReason>((resolve) => (report = resolve));
    renewer.stop();
    renewer = new LeaseRenewer(store, (_lock, reason) => report(reason));
    // a third of its validity left: renewed at once
    renewer.add(leaseWith(200, 300), 'renew');
    await sent;
    // the store answered while the event loop was held up past the validity the renewal would give: the reply is
    // read after the stall, before any timer (as a reply already on the socket is)
    answer();
    blockEventLoop(400);
    expect(await lostToo).toBe('stalled');
  });

  it("names the store's last error as the cause of a lease lost to an unreachable store", async () => {
    const store = new MemoryLockStore();
    let renewals = 0;
    // the first renewal fails, the retry is never answered: the lease runs out with a renewal in flight
    store.extendMany = (batch) =>
      ++renewals === 1 ? Promise.resolve(batch.map(() => new Error('member unreachable'))) : new Promise(() => {});
    let report!: (loss: { reason: LockLostReason; cause: unknown }) => void;
    const loss = new Promise<{ reason: LockLostReason; cause: unknown }>((resolve) => (report = resolve));
    renewer.stop();
    renewer = new LeaseRenewer(store, (_lock, reason, cause) => report({ reason, cause }));
    renewer.add(leaseWith(1000, 1500), 'renew');
    const { reason, cause } = await loss;
    expect({ reason, cause: (cause as Error | undefined)?.message }).toEqual({
      reason: 'store-unreachable',
      cause: 'member unreachable',
    });
    expect(renewals).toBe(2);
  });
});
