import { jest } from '@jest/globals';
import { Injectable, Logger, Module, type INestApplication } from '@nestjs/common';
import { EventEmitter2, EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  LockLostError,
  LockManager,
  LockModule,
  LockNotAcquiredError,
  LockService,
  LockStoreError,
  MemoryLockStore,
  WithLock,
  type LockEventMap,
  type LockEventName,
} from '../../lib/index.js';
import type { LockStore } from '../../lib/store.js';
import { LOCK_EVENT_NAMES } from '../../lib/core/events/lock-events.js';
import { memoryKind, redisKind, type StorePair } from '../support/stores.js';

type Recorded = { [E in LockEventName]: { name: E; event: LockEventMap[E] } }[LockEventName];

/** Every event of `manager`, in the order they fired. */
function record(manager: LockManager): Recorded[] {
  const seen: Recorded[] = [];
  for (const name of LOCK_EVENT_NAMES) manager.on(name, (event) => void seen.push({ name, event } as Recorded));
  return seen;
}

function names(seen: readonly Recorded[]): LockEventName[] {
  return seen.map(({ name }) => name);
}

function payload<E extends LockEventName>(seen: readonly Recorded[], name: E): LockEventMap[E] {
  const matches = seen.filter((entry) => entry.name === name);
  expect(matches).toHaveLength(1);
  return matches[0].event as LockEventMap[E];
}

/** A logger that keeps every line by level. */
function memoryLogger() {
  const lines = { debug: [] as string[], warn: [] as string[], error: [] as string[], log: [] as string[] };
  return {
    lines,
    logger: {
      debug: (message: string) => void lines.debug.push(message),
      warn: (message: string) => void lines.warn.push(message),
      error: (message: string) => void lines.error.push(message),
      log: (message: string) => void lines.log.push(message),
    },
  };
}

/** Resolves once `name` has been seen, or fails after `timeout` ms. */
function once<E extends LockEventName>(manager: LockManager, name: E, timeout = 5000): Promise<LockEventMap[E]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "${name}" event within ${timeout} ms`)), timeout);
    const off = manager.on(name, (event) => {
      clearTimeout(timer);
      off();
      resolve(event);
    });
  });
}

describe.each([memoryKind, redisKind])('lock events on $name', (kind) => {
  let pair: StorePair;
  const managers: LockManager[] = [];
  const manager = (
    store: LockStore = pair.store,
    options: Partial<ConstructorParameters<typeof LockManager>[0]> = {},
  ) => {
    const created = new LockManager({ store, closeStore: false, ...options });
    managers.push(created);
    return created;
  };

  beforeEach(async () => {
    pair = await kind.create();
  });

  afterEach(async () => {
    await Promise.all(managers.splice(0).map((m) => m.close()));
    await pair.close();
  });

  it('fires acquired, extended, released once each, in that order, for acquire, extend, release', async () => {
    const locks = manager();
    const seen = record(locks);
    const lock = await locks.acquire('order:1', { fencing: true, label: 'Checkout.pay', metricKey: 'order:<id>' });
    await lock.extend(20_000);
    expect(await lock.release()).toBe(true);
    expect(await lock.release()).toBe(false);

    expect(names(seen)).toEqual(['acquired', 'extended', 'released']);
    const base = { key: 'order:1', keyTemplate: 'order:<id>', label: 'Checkout.pay' };
    expect(payload(seen, 'acquired')).toEqual({
      ...base,
      lock,
      fence: lock.fence,
      ttl: 30_000,
      waitTime: expect.any(Number),
      attempts: 1,
    });
    expect(payload(seen, 'extended')).toEqual({ ...base, lock, ttl: 20_000 });
    expect(payload(seen, 'released')).toEqual({ ...base, lock, holdTime: expect.any(Number) });
  });

  it("names a direct call without metricKey 'direct', and an unlabelled one without a label", async () => {
    const locks = manager();
    const seen = record(locks);
    await (await locks.acquire('plain')).release();
    expect(seen[0].event).toMatchObject({ key: 'plain', keyTemplate: 'direct' });
    expect(seen[0].event).not.toHaveProperty('label');
  });

  it('fires contended, waited, acquired for a waiter that gets the lock once the holder releases it', async () => {
    const holder = manager();
    const waiter = manager(pair.other);
    const lock = await holder.acquire('busy', { ttl: 10_000 });
    const seen = record(waiter);
    let contendedAt = 0;
    waiter.on('contended', () => void (contendedAt = performance.now()));
    const waiting = waiter.acquire('busy', { wait: 5000 });
    await sleep(150);
    expect(names(seen)).toEqual(['contended']);
    // the wait runs at least from the refusal to the release (it starts before the one and ends after the other)
    const waitedAtLeast = performance.now() - contendedAt;
    await lock.release();
    const next = await waiting;

    expect(names(seen)).toEqual(['contended', 'waited', 'acquired']);
    expect(payload(seen, 'contended')).toEqual({
      key: 'busy',
      keyTemplate: 'direct',
      remainingTtl: expect.any(Number),
      wait: 5000,
    });
    const waited = payload(seen, 'waited');
    expect(waited).toMatchObject({ acquired: true, attempts: expect.any(Number) });
    expect(waited.waitTime).toBeGreaterThanOrEqual(waitedAtLeast);
    expect(waited.attempts).toBeGreaterThanOrEqual(2);
    expect(payload(seen, 'acquired')).toMatchObject({ waitTime: expect.any(Number), attempts: waited.attempts });
    expect(payload(seen, 'acquired').waitTime).toBeGreaterThanOrEqual(waited.waitTime);
    await next.release();
  });

  it('fires contended then waited (not acquired) for tryAcquire and for a wait that runs out', async () => {
    const holder = manager();
    const other = manager(pair.other);
    const lock = await holder.acquire('held', { ttl: 10_000 });
    const seen = record(other);

    expect(await other.tryAcquire('held')).toBeNull();
    expect(names(seen)).toEqual(['contended', 'waited']);
    expect(seen[0].event).toMatchObject({ wait: 0 });
    expect(seen[1].event).toMatchObject({ acquired: false, attempts: 1 });

    seen.length = 0;
    await expect(other.acquire('held', { wait: 120 })).rejects.toBeInstanceOf(LockNotAcquiredError);
    expect(names(seen)).toEqual(['contended', 'waited']);
    expect(payload(seen, 'waited').waitTime).toBeGreaterThanOrEqual(115);
    await lock.release();
  });

  it('fires acquired then lost (never released) when the lease is deleted under its holder', async () => {
    const locks = manager();
    const seen = record(locks);
    const lock = await locks.acquire('victim', { ttl: 600, autoRenew: true });
    await pair.deleteLease('victim');
    const lost = await once(locks, 'lost');
    expect(lost).toMatchObject({ key: 'victim', reason: 'taken', lock, holdTime: expect.any(Number) });
    expect(lost.error).toBeInstanceOf(LockLostError);
    expect(lost.error).toBe(lock.signal.reason);
    expect(await lock.release()).toBe(false);
    expect(names(seen).filter((name) => name !== 'renewed')).toEqual(['acquired', 'lost']);
  });

  it('fires lost, not released, when the release finds the lease already gone, and tells the holder', async () => {
    const locks = manager();
    const seen = record(locks);
    const lock = await locks.acquire('gone', { ttl: 10_000 });
    await pair.deleteLease('gone');
    expect(await lock.release()).toBe(false);
    expect(names(seen)).toEqual(['acquired', 'lost']);
    expect(payload(seen, 'lost')).toMatchObject({ reason: 'taken' });
    // the holder's work may have overlapped another holder's: its signal says so, if only now
    expect(lock.signal.aborted).toBe(true);
    expect((lock.signal.reason as LockLostError).reason).toBe('taken');
  });

  it('fires renewed for every renewal of an auto-renewed lease', async () => {
    const locks = manager();
    const seen = record(locks);
    await locks.using('renewed', () => sleep(700), { ttl: 300 });
    const renewals = names(seen).filter((name) => name === 'renewed').length;
    expect(renewals).toBeGreaterThanOrEqual(2);
    expect(names(seen)).toEqual(['acquired', ...Array(renewals).fill('renewed'), 'released']);
    expect(seen[1].event).toMatchObject({ key: 'renewed', ttl: 300 });
  });

  it('fires released with keptFor when holdAtLeast keeps the lease after a fast run', async () => {
    const locks = manager();
    const seen = record(locks);
    await locks.runLocked(['kept'], locks.resolve({ ttl: 5000 }), () => 'done', { holdAtLeast: 2000 });
    expect(names(seen)).toEqual(['acquired', 'released']);
    expect(payload(seen, 'released').keptFor).toBeGreaterThan(1500);
    expect((await locks.inspect('kept')).held).toBe(true);
  });

  it('fires acquired and released for each key of a multi-key scope, and released for what it took when one is busy', async () => {
    const locks = manager();
    const other = manager(pair.other);
    const busy = await other.acquire('acct:b', { ttl: 10_000 });
    const seen = record(locks);
    await expect(locks.using(['acct:a', 'acct:b'], () => 'never')).rejects.toBeInstanceOf(LockNotAcquiredError);
    expect(seen.map(({ name, event }) => `${name} ${event.key}`)).toEqual([
      'acquired acct:a',
      'contended acct:b',
      'waited acct:b',
      'released acct:a',
    ]);
    await busy.release();
  });

  it('keeps the lock working when listeners throw or reject, still calls the others, and logs each failure', async () => {
    const { lines, logger } = memoryLogger();
    const locks = manager(pair.store, { logger });
    const calls: string[] = [];
    locks.on('acquired', () => {
      throw new Error('listener bug');
    });
    locks.on('acquired', () => void calls.push('second acquired listener'));
    locks.on('released', () => Promise.reject(new Error('async listener bug')));
    locks.on('extended', () => {
      throw 'not even an Error';
    });

    const lock = await locks.acquire('sturdy', { fencing: true });
    expect(lock.isHeld).toBe(true);
    await lock.extend();
    expect(await lock.release()).toBe(true);
    await sleep(10);

    expect(calls).toEqual(['second acquired listener']);
    expect((await locks.inspect('sturdy')).held).toBe(false);
    expect(lines.error).toHaveLength(3);
    expect(lines.error[0]).toMatch(/listener of the lock "acquired" event failed.*listener bug/s);
    expect(lines.error[1]).toMatch(/"extended".*not even an Error/s);
    expect(lines.error[2]).toMatch(/"released".*async listener bug/s);
    expect(lines.error.join('\n')).not.toContain(lock.token);
  });

  it('keeps renewing other leases when a lost listener throws', async () => {
    const locks = manager();
    locks.on('lost', () => {
      throw new Error('listener bug');
    });
    const victim = await locks.acquire('victim', { ttl: 300, autoRenew: true });
    const survivor = await locks.acquire('survivor', { ttl: 300, autoRenew: true });
    await pair.deleteLease('victim');
    await sleep(900);
    expect(victim.signal.aborted).toBe(true);
    expect(survivor.isHeld).toBe(true);
    expect((await pair.other.inspect('survivor')).held).toBe(true);
    await survivor.release();
  });

  it('stops calling a listener once unsubscribed', async () => {
    const locks = manager();
    const seen: string[] = [];
    const off = locks.on('acquired', ({ key }) => void seen.push(key));
    await (await locks.acquire('one')).release();
    off();
    off();
    await (await locks.acquire('two')).release();
    expect(seen).toEqual(['one']);
  });

  it('refuses an unknown event name', () => {
    expect(() => manager().on('acquire' as LockEventName, () => undefined)).toThrow(/Unknown lock event "acquire"/);
  });
});

/** A memory store whose chosen operations fail as a broken connection would. */
function failingStore(fail: Partial<Record<'acquire' | 'release' | 'extend' | 'extendMany' | 'inspect', boolean>>) {
  const inner = new MemoryLockStore();
  const broken = (operation: string) =>
    Promise.reject(new LockStoreError(operation, undefined, new Error('ECONNRESET')));
  const store: LockStore = {
    acquire: (request) => (fail.acquire ? broken('acquire') : inner.acquire(request)),
    release: (key, token) => (fail.release ? broken('release') : inner.release(key, token)),
    extend: (key, token, ttl) => (fail.extend ? broken('extend') : inner.extend(key, token, ttl)),
    extendMany: (renewals) =>
      fail.extendMany
        ? Promise.resolve(renewals.map(() => new LockStoreError('renew', undefined, 'down')))
        : inner.extendMany(renewals),
    inspect: (key) => (fail.inspect ? broken('inspect') : inner.inspect(key)),
    watch: (key) => inner.watch(key),
    close: () => inner.close(),
  };
  return { store, fail };
}

describe('store-error events and logging', () => {
  const managers: LockManager[] = [];
  afterEach(async () => {
    await Promise.all(managers.splice(0).map((m) => m.close()));
  });
  const manager = (store: LockStore, logger = memoryLogger().logger) => {
    const created = new LockManager({ store, logger });
    managers.push(created);
    return created;
  };

  it('fires store-error (and no acquired) when the store fails an acquire, and logs it at error', async () => {
    const { lines, logger } = memoryLogger();
    const locks = manager(failingStore({ acquire: true }).store, logger);
    const seen = record(locks);
    await expect(locks.acquire('k', { metricKey: 'k:<id>' })).rejects.toBeInstanceOf(LockStoreError);
    expect(names(seen)).toEqual(['store-error']);
    expect(seen[0].event).toMatchObject({
      operation: 'acquire',
      key: 'k',
      keyTemplate: 'k:<id>',
      waitTime: expect.any(Number),
    });
    expect((seen[0].event as LockEventMap['store-error']).error).toBeInstanceOf(LockStoreError);
    expect(lines.error).toEqual([expect.stringMatching(/Lock store failed to acquire.*ECONNRESET/)]);
  });

  it('fires store-error then released when a release fails; the lease is left to its TTL', async () => {
    const failing = failingStore({});
    const { lines, logger } = memoryLogger();
    const locks = manager(failing.store, logger);
    const seen = record(locks);
    const lock = await locks.acquire('k');
    failing.fail.release = true;
    await expect(lock.release()).rejects.toBeInstanceOf(LockStoreError);
    expect(names(seen)).toEqual(['acquired', 'store-error', 'released']);
    expect(seen[1].event).toMatchObject({ operation: 'release', key: 'k' });
    expect(lines.error).toEqual([expect.stringMatching(/retrying until the lease would have ended by its TTL/)]);
  });

  it('fires store-error for each failed renewal, then lost with store-unreachable, and logs errors at most once per interval', async () => {
    const failing = failingStore({});
    const { lines, logger } = memoryLogger();
    const locks = manager(failing.store, logger);
    const seen = record(locks);
    const lock = await locks.acquire('k', { ttl: 300, autoRenew: true });
    failing.fail.extendMany = true;
    const lost = await once(locks, 'lost', 3000);
    expect(lost.reason).toBe('store-unreachable');
    const errors = seen.filter(({ name }) => name === 'store-error');
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(errors.every(({ event }) => (event as LockEventMap['store-error']).operation === 'renew')).toBe(true);
    expect(names(seen).at(-1)).toBe('lost');
    expect(lines.error).toHaveLength(1);
    // a direct call without metricKey: the line names no key
    expect(lines.warn).toEqual([expect.stringMatching(/^The lock was lost: the lock store could not be reached/)]);
    expect([...lines.error, ...lines.warn].join('\n')).not.toContain(lock.token);
  });

  it('fires late-grant (never acquired, lost or stalled) for a grant that came back after its validity, and logs it at warn', async () => {
    const inner = new MemoryLockStore();
    const slow: LockStore = {
      ...failingStore({}).store,
      acquire: async (request) => {
        const result = await inner.acquire(request);
        await sleep(request.ttl);
        return result;
      },
      release: (key, token) => inner.release(key, token),
      inspect: (key) => inner.inspect(key),
    };
    const { lines, logger } = memoryLogger();
    const locks = manager(slow, logger);
    const seen = record(locks);
    await expect(locks.acquire('k', { ttl: 100, label: 'Job.run' })).rejects.toBeInstanceOf(LockStoreError);

    expect(names(seen)).toEqual(['late-grant', 'store-error']);
    expect(seen[0].event).toEqual({
      key: 'k',
      keyTemplate: 'direct',
      label: 'Job.run',
      lateBy: expect.any(Number),
      elapsed: expect.any(Number),
      ttl: 100,
      retrying: false,
    });
    // given back: the store no longer holds it
    expect((await inner.inspect('k')).held).toBe(false);
    expect(lines.warn).toEqual([
      expect.stringMatching(
        /^The lock: the grant came back \d+ ms after its validity ended \(\d+ ms after the request was sent, for a 100 ms lease\), so it was released unused; no wait left to try again \[by Job\.run\]\. The store, or this process's event loop, is too slow for this ttl\.$/,
      ),
    ]);
    expect(lines.error).toEqual([expect.stringMatching(/^Lock store failed to acquire: the grant came back/)]);
  });

  it('fires store-error for a failed inspect', async () => {
    const locks = manager(failingStore({ inspect: true }).store);
    const seen = record(locks);
    await expect(locks.inspect('k')).rejects.toBeInstanceOf(LockStoreError);
    expect(seen).toEqual([
      { name: 'store-error', event: { operation: 'inspect', key: 'k', error: expect.any(LockStoreError) } },
    ]);
  });

  it('logs contention at debug, a lost lease at warn, and nothing for a plain acquire and release', async () => {
    const { lines, logger } = memoryLogger();
    const store = new MemoryLockStore();
    const locks = manager(store, logger);
    const lock = await locks.acquire('quiet');
    await lock.release();
    expect(lines).toEqual({ debug: [], warn: [], error: [], log: [] });

    const held = await locks.acquire('busy', { ttl: 10_000, label: 'Holder.run' });
    expect(await locks.tryAcquire('busy', { metricKey: 'busy:<n>', label: 'Other.run' })).toBeNull();
    expect(lines.debug).toEqual([
      expect.stringMatching(
        /^Lock "busy:<n>" is held by another owner \(its lease ends in \d+ ms\); not waiting \[by Other.run\]\.$/,
      ),
    ]);
    await locks.using('doomed', async () => {
      await store.release('doomed', locks.current()!.token);
      await expect(locks.current()!.extend()).rejects.toBeInstanceOf(LockLostError);
    });
    expect(lines.warn).toEqual([expect.stringMatching(/^The lock was lost: .* It had been held for \d+ ms\.$/)]);
    expect(lines.error).toEqual([]);
    expect([...lines.debug, ...lines.warn].join('\n')).not.toContain(held.token);
    await held.release();
  });
});

@Injectable()
class NightlyJob {
  runs = 0;

  @WithLock('nightly:<region>', { onContention: 'skip' })
  async run(region: string): Promise<string> {
    this.runs++;
    return region;
  }

  @WithLock(['acct:<from>', 'acct:<to>'])
  async transfer(from: string, to: string): Promise<string> {
    return `${from}->${to}`;
  }
}

describe('lock events in a Nest application', () => {
  let app: INestApplication;
  let locks: LockService;
  let nestEvents: Array<{ name: string; payload: unknown }>;

  beforeEach(async () => {
    @Module({
      imports: [EventEmitterModule.forRoot({ wildcard: true }), LockModule.forRoot({ store: new MemoryLockStore() })],
      providers: [NightlyJob],
    })
    class AppModule {}
    const ref = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = ref.createNestApplication({ logger: false });
    await app.init();
    locks = app.get(LockService);
    nestEvents = [];
    app.get(EventEmitter2).onAny((name, payload) => void nestEvents.push({ name: String(name), payload }));
  });

  afterEach(() => app.close());

  it('fires contended, waited, skipped (with Class.method and the key template) for a cron-style skip', async () => {
    const held = await locks.acquire('nightly:eu');
    const seen = record(locks);
    expect(await app.get(NightlyJob).run('eu')).toBeUndefined();
    expect(app.get(NightlyJob).runs).toBe(0);
    expect(names(seen)).toEqual(['contended', 'waited', 'skipped']);
    expect(payload(seen, 'skipped')).toEqual({
      key: 'nightly:eu',
      keyTemplate: 'nightly:<region>',
      label: 'NightlyJob.run',
      error: expect.any(LockNotAcquiredError),
    });
    expect(payload(seen, 'contended')).toMatchObject({ keyTemplate: 'nightly:<region>', label: 'NightlyJob.run' });
    await held.release();
  });

  it('re-emits every lock event as a Nest event named lock.<name>, with the same payload, in the same order', async () => {
    const seen = record(locks);
    await app.get(NightlyJob).run('us');
    const held = await locks.acquire('nightly:us');
    await app.get(NightlyJob).run('us');
    await held.release();
    expect(nestEvents.map(({ name }) => name)).toEqual(names(seen).map((name) => `lock.${name}`));
    expect(nestEvents.map(({ name }) => name)).toEqual([
      'lock.acquired',
      'lock.released',
      'lock.acquired',
      'lock.contended',
      'lock.waited',
      'lock.skipped',
      'lock.released',
    ]);
    expect(nestEvents.map(({ payload }) => payload)).toEqual(seen.map(({ event }) => event));
  });

  it('reports each key of a multi-key @WithLock under its own template', async () => {
    const seen = record(locks);
    await app.get(NightlyJob).transfer('1', '2');
    expect(seen.filter(({ name }) => name === 'acquired').map(({ event }) => [event.key, event.keyTemplate])).toEqual([
      ['acct:1', 'acct:<from>'],
      ['acct:2', 'acct:<to>'],
    ]);
  });

  it('keeps the lock working when a Nest event listener throws', async () => {
    app.get(EventEmitter2).on('lock.acquired', () => {
      throw new Error('handler bug');
    });
    const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    expect(await app.get(NightlyJob).run('ap')).toBe('ap');
    expect(await locks.isLocked('nightly:ap')).toBe(false);
    expect(error.mock.calls.map(([message]) => String(message))).toEqual([
      expect.stringMatching(/listener of the lock "acquired" event failed \(the lock is not affected\).*handler bug/s),
    ]);
    error.mockRestore();
  });
});

describe('lock events without @nestjs/event-emitter set up', () => {
  it('works when EventEmitterModule is not imported', async () => {
    const ref = await Test.createTestingModule({
      imports: [LockModule.forRoot({ store: new MemoryLockStore() })],
    }).compile();
    const app = ref.createNestApplication({ logger: false });
    await app.init();
    const locks = app.get(LockService);
    const seen = record(locks);
    await (await locks.acquire('k')).release();
    expect(names(seen)).toEqual(['acquired', 'released']);
    await app.close();
  });
});
