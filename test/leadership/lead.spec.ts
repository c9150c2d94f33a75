import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockManager } from '../../lib/core/lock-manager.js';
import { LockConfigurationError } from '../../lib/errors/lock-configuration.error.js';
import type { LockLostError } from '../../lib/errors/lock-lost.error.js';
import { LockStoreError } from '../../lib/errors/lock-store.error.js';
import type { LockEventMap } from '../../lib/core/events/lock-events.js';
import type { LeadershipEventMap } from '../../lib/leadership/leadership-events.js';
import type { Leadership } from '../../lib/leadership/leadership.js';
import type { LockLogger } from '../../lib/interfaces/lock-options.interface.js';
import { MemoryLockStore } from '../../lib/stores/memory/memory.store.js';

type Seen = { [E in keyof LeadershipEventMap]: [E, LockEventMap[E]] }[keyof LeadershipEventMap];

describe('LockManager.lead', () => {
  let store: MemoryLockStore;
  let manager: LockManager;
  let seen: Seen[];
  let logged: string[];

  beforeEach(() => {
    store = new MemoryLockStore();
    logged = [];
    const logger: LockLogger = {
      log: (message) => logged.push(`log ${message}`),
      warn: (message) => logged.push(`warn ${message}`),
      error: (message) => logged.push(`error ${message}`),
    };
    manager = new LockManager({ store, logger, ttl: 1000 });
    seen = [];
    for (const event of ['elected', 'leadership-lost', 'resigned'] as const) {
      manager.on(event, (payload) => void seen.push([event, payload] as Seen));
    }
  });

  afterEach(() => manager.close());

  /** Resolves once `check` holds, looking every few ms. */
  async function until(check: () => boolean, timeout = 5000): Promise<void> {
    const deadline = performance.now() + timeout;
    while (!check()) {
      if (performance.now() > deadline) throw new Error(`condition not met within ${timeout} ms`);
      await sleep(5);
    }
  }

  const untilAborted = (signal: AbortSignal) =>
    new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));

  it('runs the function with a term and a live signal while this instance leads', async () => {
    let current: Leadership | undefined;
    const handle = manager.lead('relay', async (leadership) => {
      current = leadership;
      await untilAborted(leadership.signal);
    });
    await until(() => current !== undefined);

    expect(current).toMatchObject({ name: 'relay', isLeader: true });
    expect(current!.term).toBeGreaterThan(0);
    expect(current!.signal.aborted).toBe(false);
    expect(handle).toMatchObject({ name: 'relay', isLeader: true, term: current!.term });
    expect(manager.isLeader('relay')).toBe(true);
    expect(manager.isLeader('other')).toBe(false);
    expect(seen).toEqual([
      ['elected', { name: 'relay', key: 'leader:relay', keyTemplate: 'leader:relay', term: current!.term, ttl: 1000 }],
    ]);
    expect(logged).toEqual([`log Leadership "relay": this instance leads, term ${current!.term}.`]);

    await handle.stop();
    expect(current!.isLeader).toBe(false);
    expect((current!.signal.reason as LockLostError).reason).toBe('resigned');
    expect(handle.isLeader).toBe(false);
    expect(handle.term).toBeUndefined();
    expect(manager.isLeader('relay')).toBe(false);
    expect(seen[1]).toEqual(['resigned', expect.objectContaining({ name: 'relay', cause: 'stopped' })]);
    expect((await manager.inspectLeader('relay')).led).toBe(false);
  });

  it('keeps the lease renewed past its ttl while the function runs', async () => {
    let current: Leadership | undefined;
    manager.lead('long', async (leadership) => {
      current = leadership;
      await untilAborted(leadership.signal);
    });
    await until(() => current !== undefined);
    await sleep(2500);

    expect(current!.isLeader).toBe(true);
    const info = await manager.inspectLeader('long');
    expect(info).toMatchObject({ led: true, term: current!.term, leader: { pid: process.pid, label: 'leader:long' } });
    expect(info.remainingTtl).toBeGreaterThan(0);
  });

  it('resigns when the function returns and campaigns again after the back-off, with a higher term', async () => {
    const terms: number[] = [];
    const handle = manager.lead('batch', ({ term }) => void terms.push(term), { backoff: 100 });
    await until(() => terms.length >= 3);
    await handle.stop();

    expect(terms[1]).toBeGreaterThan(terms[0]);
    expect(terms[2]).toBeGreaterThan(terms[1]);
    const resigned = seen.filter(([event]) => event === 'resigned').map(([, payload]) => payload);
    expect(resigned.slice(0, 2)).toEqual([
      expect.objectContaining({ term: terms[0], cause: 'returned' }),
      expect.objectContaining({ term: terms[1], cause: 'returned' }),
    ]);
  });

  it('logs a function that throws, resigns and campaigns again', async () => {
    let calls = 0;
    const handle = manager.lead(
      'flaky',
      () => {
        calls++;
        if (calls === 1) throw new Error('the outbox table is missing');
      },
      { backoff: 50 },
    );
    await until(() => calls >= 2);
    await handle.stop();

    expect(seen.find(([event]) => event === 'resigned')?.[1]).toMatchObject({ cause: 'threw' });
    const errors = logged.filter((line) => line.startsWith('error '));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /^error Leadership "flaky": the leader's function threw in term \d+; it resigns and campaigns again: Error: the outbox table is missing\\n {4}at /,
    );
  });

  it('aborts the signal when the lease is lost, reports it once, and campaigns again once the function returned', async () => {
    const signals: AbortSignal[] = [];
    manager.lead('poller', async (leadership) => {
      signals.push(leadership.signal);
      await untilAborted(leadership.signal);
    });
    await until(() => signals.length === 1);
    // the store forgets the lease, as after an expiry nobody renewed in time
    await (store as unknown as { leases: Map<string, unknown> }).leases.delete('leader:poller');
    await until(() => signals.length === 2);

    expect((signals[0].reason as LockLostError).reason).toBe('taken');
    const events = seen.map(([event]) => event);
    expect(events).toEqual(['elected', 'leadership-lost', 'elected']);
    expect(seen[1][1]).toMatchObject({ name: 'poller', reason: 'taken', term: seen[0][1].term });
  });

  it('resigns every leadership on close(): the signal aborts first, the lease is released after the function', async () => {
    const order: string[] = [];
    manager.lead('relay', async (leadership) => {
      await untilAborted(leadership.signal);
      order.push(`aborted ${(leadership.signal.reason as LockLostError).reason}`);
      await sleep(20);
      order.push('returned');
    });
    await until(() => manager.isLeader('relay'));
    const released = new Promise<void>((resolve) => manager.on('released', () => resolve()));
    await manager.close();
    await released;

    expect(order).toEqual(['aborted resigned', 'returned']);
    expect(seen.map(([event]) => event)).toEqual(['elected', 'resigned']);
    expect(seen[1][1]).toMatchObject({ cause: 'shutdown' });
    expect(() => manager.lead('late', () => undefined)).toThrow(LockStoreError);
  });

  it('lets a second campaign in this process lead only after the first was stopped', async () => {
    const other = new LockManager({ store, closeStore: false, ttl: 1000 });
    try {
      const first = manager.lead('one', (leadership) => untilAborted(leadership.signal));
      await until(() => first.isLeader);
      const second = other.lead('one', (leadership) => untilAborted(leadership.signal));
      await sleep(1100);
      expect(second.isLeader).toBe(false);
      await first.stop();
      await until(() => second.isLeader, 1000);
      expect(second.term).toBeGreaterThan(0);
    } finally {
      await other.close();
    }
  });

  it('refuses a name it campaigns for already, a bad name, function or option, and a ttl too short for a lease', () => {
    manager.lead('taken', (leadership) => untilAborted(leadership.signal));
    expect(() => manager.lead('taken', () => undefined)).toThrow(
      'Invalid nestjs-lock option "lead(taken)": got the string "taken"; this manager campaigns for that leadership already',
    );
    expect(() => manager.lead('', () => undefined)).toThrow(LockConfigurationError);
    expect(() => manager.lead('a\nb', () => undefined)).toThrow('expected no control characters');
    expect(() => manager.lead('x'.repeat(257), () => undefined)).toThrow('at most 256 characters');
    expect(() => manager.lead('fn', 'run' as never)).toThrow(
      '"lead(fn) fn": got the string "run"; expected a function',
    );
    expect(() => manager.lead('opts', () => undefined, { tll: '5s' } as never)).toThrow('did you mean "ttl"?');
    expect(() => manager.lead('opts', () => undefined, { backoff: -1 })).toThrow('"lead(opts).backoff"');
    expect(() => manager.lead('opts', () => undefined, { ttl: 50 })).toThrow('"lead(opts).ttl"');
    expect(() => manager.lead('opts', () => undefined, { wait: '1s' } as never)).toThrow(
      'leadership options have no such option',
    );
    expect(manager.isLeader('opts')).toBe(false);
  });

  it("refuses a ttl shorter than the store's least lease, naming the option", async () => {
    const memory = new MemoryLockStore();
    const wholeSeconds = Object.assign(memory, { capabilities: { ...memory.capabilities, limits: { minTtl: 1000 } } });
    const strict = new LockManager({ store: wholeSeconds, ttl: '5s' });
    try {
      expect(() => strict.lead('short', () => undefined, { ttl: 500 })).toThrow('"lead(short).ttl": got 500');
    } finally {
      await strict.close();
    }
  });
});
