import { LockConfigurationError } from '../../../lib/errors/lock-configuration.error.js';
import { LockNotAcquiredError } from '../../../lib/errors/lock-not-acquired.error.js';
import { LockManager } from '../../../lib/core/lock-manager.js';
import type { Lock } from '../../../lib/core/lock.js';
import { Redis } from 'ioredis';
import { MemoryLockStore } from '../../../lib/stores/memory/memory.store.js';
import { RedlockStore } from '../../../lib/stores/redlock/redlock.store.js';
import { freePort } from '../../support/redis-server.js';
import { memoryCapableKind, redisCapableKind, type CapableStore } from '../../support/capable-stores.js';
import { takeTurns, waiterFirst } from '../../support/taking-turns.js';

/** Resolves after `ms` milliseconds (only to keep a section busy, never to wait for an outcome). */
const hold = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The error `promise` rejects with, or a failure when it resolves. */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

/** Resolves once `check` holds, asking every few ms (for state only another party changes). */
async function until(check: () => Promise<boolean>, timeout = 3000): Promise<void> {
  const deadline = Date.now() + timeout;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await hold(5);
  }
}

describe.each([memoryCapableKind, redisCapableKind])('permits through LockManager on a $name', (kind) => {
  let capable: CapableStore;
  let locks: LockManager;

  beforeEach(async () => {
    capable = await kind.create();
    locks = new LockManager({ store: capable.store, closeStore: false, ttl: '2s' });
  });

  afterEach(async () => {
    await locks.close();
    await capable.close();
  });

  it('lets at most 3 of 8 concurrent using() calls into a semaphore of limit 3, and runs every one', async () => {
    let inside = 0;
    let most = 0;
    const ran: number[] = [];
    await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        locks.using(
          'report',
          async () => {
            inside++;
            most = Math.max(most, inside);
            await hold(30);
            inside--;
            ran.push(index);
          },
          { limit: 3, wait: '5s' },
        ),
      ),
    );
    expect(most).toBe(3);
    expect(ran).toHaveLength(8);
    expect(locks.heldCount).toBe(0);
  });

  it('gives each permit its own token, and a release frees exactly one place', async () => {
    const held = await Promise.all([1, 2, 3].map(() => locks.acquire('quota', { limit: 3 })));
    expect(new Set(held.map((lock) => lock.token)).size).toBe(3);
    expect(await locks.tryAcquire('quota', { limit: 3 })).toBeNull();
    await held[0].release();
    expect(held[1].isHeld && held[2].isHeld).toBe(true);
    const fourth = await locks.tryAcquire('quota', { limit: 3 });
    expect(fourth).not.toBeNull();
    expect(await locks.tryAcquire('quota', { limit: 3 })).toBeNull();
    expect((await locks.inspect('quota')).holders).toBe(3);
    await Promise.all([held[1], held[2], fourth as Lock].map((lock) => lock.release()));
  });

  it('refuses a full semaphore at once with LockNotAcquiredError, and leaves the line after a timed-out wait', async () => {
    const held = await Promise.all([1, 2].map(() => locks.acquire('export', { limit: 2 })));
    expect(await rejection(locks.using('export', () => 'ran', { limit: 2 }))).toBeInstanceOf(LockNotAcquiredError);
    const waited = await rejection(locks.acquire('export', { limit: 2, wait: 150 }));
    expect(waited).toBeInstanceOf(LockNotAcquiredError);
    await until(async () => (await capable.store.capabilities.permits.inspect('export')).waiting === 0);
    await Promise.all(held.map((lock) => lock.release()));
    const freed = await locks.tryAcquire('export', { limit: 2 });
    expect(freed).not.toBeNull();
    await freed?.release();
  });

  it('lets readers overlap, and a writer exclude readers and writers', async () => {
    const reader = await locks.acquire('doc', { mode: 'read' });
    const second = await locks.tryAcquire('doc', { mode: 'read' });
    expect(second).not.toBeNull();
    expect(await locks.tryAcquire('doc', { mode: 'write' })).toBeNull();
    await Promise.all([reader.release(), second?.release()]);
    const writer = await locks.acquire('doc', { mode: 'write' });
    expect(await locks.tryAcquire('doc', { mode: 'read' })).toBeNull();
    expect(await locks.tryAcquire('doc', { mode: 'write' })).toBeNull();
    expect(await locks.inspect('doc')).toMatchObject({ held: true, holders: 1, mode: 'write' });
    await writer.release();
  });

  it('serves a waiting writer before readers that come after it', async () => {
    const first = await locks.acquire('catalog', { mode: 'read' });
    const order: string[] = [];
    const writer = locks.acquire('catalog', { mode: 'write', wait: '5s' }).then((lock) => (order.push('writer'), lock));
    await until(async () => (await capable.store.capabilities.permits.inspect('catalog')).waiting === 1);
    // a steady stream of readers: none may get in beside the first while the writer waits
    expect(await locks.tryAcquire('catalog', { mode: 'read' })).toBeNull();
    const late = locks.acquire('catalog', { mode: 'read', wait: '5s' }).then((lock) => (order.push('reader'), lock));
    await first.release();
    const written = await writer;
    expect(order).toEqual(['writer']);
    await written.release();
    await (await late).release();
    expect(order).toEqual(['writer', 'reader']);
  });

  it('refuses a second limit, or a mode, on a semaphore in use with LockConfigurationError', async () => {
    const held = await locks.acquire('jobs', { limit: 3 });
    const other = await rejection(locks.acquire('jobs', { limit: 5, wait: '1s' }));
    expect(other).toBeInstanceOf(LockConfigurationError);
    expect((other as LockConfigurationError).option).toBe('limit');
    expect(other.message).toContain('a semaphore with limit 3');
    expect(await rejection(locks.tryAcquire('jobs', { mode: 'read' }))).toBeInstanceOf(LockConfigurationError);
    await held.release();
  });

  it('refuses limit with mode, and a limit that is no whole number, by name', async () => {
    const both = await rejection(locks.acquire('x', { limit: 2, mode: 'read' }));
    expect((both as LockConfigurationError).option).toBe('mode');
    expect(((await rejection(locks.acquire('x', { limit: 0 }))) as LockConfigurationError).option).toBe('limit');
    const mode = { mode: 'exclusive' } as unknown as { mode: 'read' };
    expect(((await rejection(locks.acquire('x', mode))) as LockConfigurationError).option).toBe('mode');
  });

  it('hands a nested read of a key the flow writes the write lock it holds', async () => {
    await locks.using(
      'ledger',
      async (writer) => {
        await locks.using('ledger', (reader) => expect(reader).toBe(writer), { mode: 'read' });
        await locks.using('ledger', (again) => expect(again).toBe(writer), { mode: 'write' });
      },
      { mode: 'write' },
    );
  });

  it('refuses a nested write of a key the flow reads with a clear error instead of a deadlock', async () => {
    const error = await locks.using(
      'ledger',
      () => rejection(locks.using('ledger', () => 'wrote', { mode: 'write', wait: '5s' })),
      { mode: 'read' },
    );
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect(error.message).toContain('holds a read permit of the key');
    expect(
      await rejection(locks.using('ledger', () => locks.using('ledger', () => 1), { mode: 'read' })),
    ).toBeInstanceOf(LockConfigurationError);
  });

  it('hands a nested call of a semaphore with the same limit the permit the flow holds', async () => {
    await locks.using(
      'pool',
      async (outer) => {
        expect(locks.current()).toBe(outer);
        await locks.using('pool', (inner) => expect(inner).toBe(outer), { limit: 2 });
        expect(await rejection(locks.using('pool', () => 1, { limit: 4 }))).toBeInstanceOf(LockConfigurationError);
        expect(locks.heldCount).toBe(1);
      },
      { limit: 2 },
    );
  });

  it('shows holders, limit and mode in inspect(), and the mutex view for a key without permits', async () => {
    const held = await Promise.all([1, 2].map(() => locks.acquire('shown', { limit: 3, label: 'Export.run' })));
    const info = await locks.inspect('shown');
    expect(info).toMatchObject({ held: true, holders: 2, limit: 3, holder: { label: 'Export.run' } });
    expect(JSON.stringify(info)).not.toContain(held[0].token);
    const reader = await locks.acquire('read-shown', { mode: 'read' });
    expect(await locks.inspect('read-shown')).toMatchObject({ held: true, holders: 1, mode: 'read' });
    const mutex = await locks.acquire('plain');
    const plain = await locks.inspect('plain');
    expect(plain.held).toBe(true);
    expect(plain).not.toHaveProperty('holders');
    await Promise.all([...held, reader, mutex].map((lock) => lock.release()));
  });

  it('renews each permit while its section runs, and grants fences when asked', async () => {
    const fences: Array<number | undefined> = [];
    await locks.using(
      'renewed',
      async (lock) => {
        fences.push(lock.fence);
        await hold(450);
        expect(lock.isHeld).toBe(true);
        expect((await locks.inspect('renewed')).held).toBe(true);
      },
      { limit: 2, ttl: 300, fencing: true },
    );
    const next = await locks.acquire('renewed', { limit: 2, fencing: true });
    expect(next.fence).toBeGreaterThan(fences[0] as number);
    await next.release();
  });

  it('lets the waiter a release lets in hold its permit before that release returns to its caller', async () => {
    const events: string[] = [];
    locks.on('acquired', () => events.push('acquired'));
    locks.on('released', () => events.push('released'));
    const order = await takeTurns(locks, () => locks.acquire('turns', { limit: 1, wait: '10s' }));
    // the first hand-off may wait for the store's subscription to be made
    expect(waiterFirst(order, 1)).toEqual({ first: 6, after: 0 });
    // the events still tell each permit's end before the next holder's start
    expect(events).toEqual(Array.from({ length: 8 }, () => ['acquired', 'released']).flat());
  });

  it('reports a permit with the same events as a mutex lease', async () => {
    const seen: string[] = [];
    for (const event of ['acquired', 'contended', 'waited', 'released'] as const)
      locks.on(event, () => seen.push(event));
    const first = await locks.acquire('evented', { limit: 1 });
    const second = locks.acquire('evented', { limit: 1, wait: '2s' });
    await until(async () => seen.includes('contended'));
    await first.release();
    await (await second).release();
    expect(seen).toEqual(['acquired', 'contended', 'released', 'waited', 'acquired', 'released']);
  });
});

describe('a mutex beside permits', () => {
  it("asks the store with a mutex's request as before: no shape in it", async () => {
    const store = new MemoryLockStore();
    const requests: object[] = [];
    const acquire = store.acquire.bind(store);
    store.acquire = (request) => (requests.push(request), acquire(request));
    const locks = new LockManager({ store });
    await (await locks.acquire('k')).release();
    expect(Object.keys(requests[0]).sort()).toEqual(['fencing', 'holder', 'key', 'token', 'ttl', 'waiting']);
    await locks.close();
  });

  it('lets in one of a permit and a mutex lease asked for in the same tick (MemoryLockStore)', async () => {
    const locks = new LockManager({ store: new MemoryLockStore() });
    // the store's check done: both asks reach the store in this tick
    await (await locks.acquire('warm-up')).release();
    for (const mode of ['write', 'read'] as const) {
      const outcomes = await Promise.allSettled([
        locks.acquire('ledger', { mode, wait: 0 }),
        locks.acquire('ledger', { wait: 0 }),
      ]);
      const granted = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
      // a permit decided on a reading of the mutex taken before the mutex's own grant let both in
      expect(granted).toHaveLength(1);
      await Promise.all(granted.map((lock) => lock.release()));
    }
    await locks.close();
  });
});

describe('permits on a store without them', () => {
  it('refuses a call-time limit on a store with no permits by name', async () => {
    // nodes that are never reached: the refusal comes before any store call
    const nodes = await Promise.all(
      [0, 1, 2].map(async () => new Redis({ port: await freePort(), lazyConnect: true })),
    );
    const locks = new LockManager({ store: new RedlockStore({ nodes }) });
    const error = await rejection(locks.acquire('k', { limit: 2 }));
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect(error.message).toContain('RedlockStore cannot keep N-holder or readers-writer locks');
    await locks.close();
    nodes.forEach((node) => node.disconnect());
  });
});
