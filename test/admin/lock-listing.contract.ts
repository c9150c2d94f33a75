import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockManager } from '../../lib/core/lock-manager.js';
import type { Lock } from '../../lib/core/lock.js';
import { describeLock, listLocks } from '../../lib/listing/lock-listing.js';
import { fingerprint, forceRelease } from '../../lib/listing/force-release.js';
import { LockConfigurationError } from '../../lib/errors/lock-configuration.error.js';
import { LockLostError } from '../../lib/errors/lock-lost.error.js';
import type { LockStore } from '../../lib/interfaces/lock-store.interface.js';
import type { LockSummary } from '../../lib/interfaces/lock-summary.interface.js';
import type { StoreKind, StorePair } from '../support/stores.js';
import { abortReason } from '../support/within.js';

/** Polls `read` until `done` holds of its value (a waiter takes its place asynchronously), for up to 20 s. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await sleep(50);
  }
}

/**
 * What `LockService.list` and `describe` show of a store's locks, read through a second view of the store (as an
 * operator's process would): the right kinds, holders, ttls and waiters, and never a token.
 */
/**
 * That a page's work is bounded: with more free rooms or rows before `key` than one page reads, the first page
 * holds no lock and a cursor, and the second `key`.
 */
export async function expectOnSecondPage(store: LockStore, key: string): Promise<void> {
  const first = await listLocks(store, { limit: 10 });
  expect(first.locks).toEqual([]);
  expect(first.cursor).toBeDefined();
  const second = await listLocks(store, { limit: 10, cursor: first.cursor });
  expect(second.locks.map((listed) => listed.key)).toEqual([key]);
}

export function describeListingContract(kind: StoreKind, options: { permits?: boolean } = {}): void {
  describe(`listing on ${kind.name}`, () => {
    let pair: StorePair;
    let managers: LockManager[];
    let held: Lock[];
    const manager = (store: LockStore): LockManager => {
      const created = new LockManager({ store, closeStore: false });
      managers.push(created);
      return created;
    };

    beforeEach(async () => {
      pair = await kind.create();
      managers = [];
      held = [];
    });

    afterEach(async () => {
      await Promise.all(held.map((lock) => lock.release().catch(() => false)));
      await Promise.all(managers.map((created) => created.close()));
      await pair.close();
    });

    it('lists a fenced mutex with its holder, remaining ttl and fence, and no token', async () => {
      const lock = await manager(pair.store).acquire('orders:1', { ttl: 30_000, fencing: true, label: 'Orders.pay' });
      held.push(lock);
      const { locks } = await listLocks(pair.other);
      expect(locks).toHaveLength(1);
      const [listed] = locks;
      expect(listed).toMatchObject({ key: 'orders:1', kind: 'mutex', waiters: 0, fence: lock.fence });
      expect(listed.holders).toHaveLength(1);
      expect(listed.holders[0]).toMatchObject({ label: 'Orders.pay', host: hostname(), pid: process.pid });
      expect(listed.holders[0].remainingTtl).toBeGreaterThan(0);
      expect(listed.holders[0].remainingTtl).toBeLessThanOrEqual(30_000);
      expect(listed.holders[0].acquiredAt).toBeInstanceOf(Date);
      expect(JSON.stringify(locks)).not.toContain(lock.token);
    });

    (options.permits === false ? it.skip : it)('lists a semaphore with both of its holders and its limit', async () => {
      const first = await manager(pair.store).acquire('pool', { ttl: 30_000, limit: 3, label: 'first' });
      const second = await manager(pair.other).acquire('pool', { ttl: 30_000, limit: 3, label: 'second' });
      held.push(first, second);
      const listed = (await describeLock(pair.other, 'pool')) as LockSummary;
      expect(listed).toMatchObject({ key: 'pool', kind: 'semaphore', limit: 3, waiters: 0 });
      expect(listed.holders.map((holder) => holder.label).sort()).toEqual(['first', 'second']);
      for (const holder of listed.holders) expect(holder.remainingTtl).toBeGreaterThan(0);
      const text = JSON.stringify(await listLocks(pair.other));
      expect(text).not.toContain(first.token);
      expect(text).not.toContain(second.token);
    });

    it('counts a waiter of a held lock, and forgets it once it gave up', async () => {
      const lock = await manager(pair.store).acquire('report', { ttl: 30_000, label: 'Report.build' });
      held.push(lock);
      const waiting = manager(pair.other).acquire('report', { ttl: 30_000, wait: 60_000 });
      const seen = await eventually(
        () => describeLock(pair.other, 'report'),
        (summary) => (summary?.waiters ?? 0) >= 1,
      );
      expect(seen).toMatchObject({ key: 'report', kind: 'mutex', waiters: 1 });
      await lock.release();
      held.push(await waiting);
      const after = (await describeLock(pair.other, 'report')) as LockSummary;
      expect(after.waiters).toBe(0);
    });

    it('lists only the keys under a prefix, and keys that need escaping as they were written', async () => {
      const owner = manager(pair.store);
      for (const key of ['a}b{c', 'a%7Bz', 'b:1']) held.push(await owner.acquire(key, { ttl: 30_000 }));
      const underA = await listLocks(pair.other, { prefix: 'a' });
      expect(underA.locks.map((lock) => lock.key).sort()).toEqual(['a%7Bz', 'a}b{c']);
      expect((await listLocks(pair.other, { prefix: 'a}' })).locks.map((lock) => lock.key)).toEqual(['a}b{c']);
    });

    it.each([1, 7])('reads a large key space in pages of at most %i locks, each key once', async (limit) => {
      const owner = manager(pair.store);
      const keys = Array.from({ length: 25 }, (_unused, index) => `page:${index}`);
      held.push(...(await Promise.all(keys.map((key) => owner.acquire(key, { ttl: 30_000 })))));
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await listLocks(pair.other, { limit, ...(cursor ? { cursor } : {}) });
        expect(page.locks.length).toBeLessThanOrEqual(limit);
        seen.push(...page.locks.map((lock) => lock.key));
        cursor = page.cursor;
        pages++;
      } while (cursor && pages < 1000);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.sort()).toEqual([...keys].sort());
    });

    it('refuses a cursor that no page returned, or that a page under another prefix returned', async () => {
      const owner = manager(pair.store);
      for (const key of ['a:1', 'a:2', 'b:1']) held.push(await owner.acquire(key, { ttl: 30_000 }));
      await expect(listLocks(pair.other, { cursor: 'garbage' })).rejects.toThrow(LockConfigurationError);
      await expect(listLocks(pair.other, { cursor: 'garbage' })).rejects.toThrow(/"cursor"/);
      const first = await listLocks(pair.other, { prefix: 'a:', limit: 1 });
      expect(first.cursor).toBeDefined();
      await expect(listLocks(pair.other, { prefix: 'b:', cursor: first.cursor })).rejects.toThrow(/prefix "a:"/);
    });

    it('leaves out a lock once it is released', async () => {
      const lock = await manager(pair.store).acquire('gone', { ttl: 30_000 });
      await lock.release();
      expect((await listLocks(pair.other)).locks).toEqual([]);
      expect(await describeLock(pair.other, 'gone')).toBeUndefined();
    });
    describe('a forced release', () => {
      it('ends the lease, raises the fence above it and tells the holder it was revoked', async () => {
        const lines: string[] = [];
        const logger = { log: () => undefined, warn: (line: string) => lines.push(line), error: () => undefined };
        const lock = await manager(pair.store).acquire('stuck', { ttl: 3000, fencing: true, autoRenew: true });
        held.push(lock);
        const lost = abortReason(lock.signal);
        const forced = await forceRelease(pair.other, 'stuck', { by: 'ops on call', logger, showKey: false });
        expect(forced.ended).toBe(1);
        expect(forced.fence).toBeGreaterThan(lock.fence as number);
        expect(await describeLock(pair.other, 'stuck')).toBeUndefined();
        const reason = await lost;
        expect(reason).toBeInstanceOf(LockLostError);
        expect((reason as LockLostError).reason).toBe('revoked');
        const next = await manager(pair.other).acquire('stuck', { ttl: 3000, fencing: true });
        held.push(next);
        expect(next.fence).toBeGreaterThan(forced.fence);
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain('ops on call');
        expect(lines[0]).toContain(fingerprint('stuck'));
        expect(lines[0]).not.toContain(lock.token);
        expect(lines[0]).not.toContain('"stuck"');
      });

      it('tells a holder that learns of it only at its release that it was revoked', async () => {
        const lock = await manager(pair.store).acquire('stuck:quiet', { ttl: 30_000, autoRenew: false });
        const lost = abortReason(lock.signal);
        await forceRelease(pair.other, 'stuck:quiet', { by: 'ops', showKey: true });
        expect(await lock.release()).toBe(false);
        expect(((await lost) as LockLostError).reason).toBe('revoked');
      });

      (options.permits === false ? it.skip : it)('ends every permit of a semaphore, each holder told', async () => {
        const first = await manager(pair.store).acquire('slots', { ttl: 3000, limit: 2, autoRenew: true });
        const second = await manager(pair.other).acquire('slots', { ttl: 3000, limit: 2, autoRenew: true });
        held.push(first, second);
        const losses = [abortReason(first.signal), abortReason(second.signal)];
        const forced = await forceRelease(pair.other, 'slots', { by: 'ops', showKey: true });
        expect(forced.ended).toBe(2);
        expect(await describeLock(pair.other, 'slots')).toBeUndefined();
        for (const reason of await Promise.all(losses)) expect((reason as LockLostError).reason).toBe('revoked');
      });

      it('on a free key ends nothing and still raises the fence', async () => {
        const forced = await forceRelease(pair.other, 'free', { by: 'ops', showKey: true });
        expect(forced.ended).toBe(0);
        const lock = await manager(pair.store).acquire('free', { ttl: 3000, fencing: true });
        held.push(lock);
        expect(lock.fence).toBeGreaterThan(forced.fence);
      });
    });
  });
}
