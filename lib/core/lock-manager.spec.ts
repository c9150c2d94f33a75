import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { LockKeyError } from '../errors/lock-key.error.js';
import type { LockStore } from '../interfaces/lock-store.interface.js';
import { LockManager, type LockManagerOptions } from './lock-manager.js';
import { MemoryLockStore } from '../stores/memory/memory.store.js';

/** A memory store whose every operation is recorded, to prove that bad input never reaches the store. */
function recordingStore(): { store: LockStore; calls: string[] } {
  const inner = new MemoryLockStore();
  const calls: string[] = [];
  const store: LockStore = {
    acquire: (request) => (calls.push('acquire'), inner.acquire(request)),
    release: (key, token) => (calls.push('release'), inner.release(key, token)),
    extend: (key, token, ttl) => (calls.push('extend'), inner.extend(key, token, ttl)),
    extendMany: (renewals) => (calls.push('extendMany'), inner.extendMany(renewals)),
    inspect: (key) => (calls.push('inspect'), inner.inspect(key)),
    watch: (key) => (calls.push('watch'), inner.watch(key)),
    close: () => inner.close(),
  };
  return { store, calls };
}

/** The error the constructor throws for `options`, or a failure when it throws none. */
function constructionError(options: unknown): LockConfigurationError {
  try {
    new LockManager(options as LockManagerOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(LockConfigurationError);
    return error as LockConfigurationError;
  }
  throw new Error(`new LockManager accepted ${String(options)}`);
}

describe('LockManager construction', () => {
  const store = new MemoryLockStore();

  it('accepts a store alone and valid defaults, without touching the store', async () => {
    const { store: recorded, calls } = recordingStore();
    const manager = new LockManager({
      store: recorded,
      ttl: '10s',
      wait: 0,
      retry: { minDelay: 10 },
      autoRenew: false,
      fencing: true,
      maxKeyLength: 64,
      logger: { warn: () => undefined, error: () => undefined },
    });
    expect(manager.resolve()).toMatchObject({ ttl: 10_000, wait: 0, autoRenew: false, fencing: true });
    expect(calls).toEqual([]);
    await manager.close();
  });

  it.each<[string, Partial<LockManagerOptions> | Record<string, unknown>, string]>([
    ['ttl: 0', { ttl: 0 }, 'ttl'],
    ['ttl: "30 seconds"', { ttl: '30 seconds' }, 'ttl'],
    ['wait: -1', { wait: -1 }, 'wait'],
    ['wait: NaN', { wait: NaN }, 'wait'],
    ['retry: "exponential"', { retry: 'exponential' }, 'retry'],
    ['retry.minDelay: 0', { retry: { minDelay: 0 } }, 'retry.minDelay'],
    ['retry.maxDelay below minDelay', { retry: { minDelay: 500, maxDelay: 100 } }, 'retry.maxDelay'],
    ['retry.factor: 0.5', { retry: { factor: 0.5 } }, 'retry.factor'],
    ['autoRenew: "true"', { autoRenew: 'true' }, 'autoRenew'],
    ['fencing: 1', { fencing: 1 }, 'fencing'],
    ['maxKeyLength: 0', { maxKeyLength: 0 }, 'maxKeyLength'],
    ['maxKeyLength: 1.5', { maxKeyLength: 1.5 }, 'maxKeyLength'],
    ['maxKeyLength: "1024"', { maxKeyLength: '1024' }, 'maxKeyLength'],
    ['maxKeyLength: Infinity', { maxKeyLength: Infinity }, 'maxKeyLength'],
  ])('throws LockConfigurationError for %s at construction, not at first use', (_label, bad, option) => {
    const error = constructionError({ store, ...bad });
    expect(error.option).toBe(option);
    expect(error.message).toContain(`"${option}"`);
  });

  it.each<[string, unknown]>([
    ['no options at all', undefined],
    ['null options', null],
    ['no store', {}],
    ['a null store', { store: null }],
    ['a store that is a string', { store: 'redis://localhost' }],
    ['a store without the lock operations', { store: { acquire: async () => ({ acquired: true }) } }],
  ])('throws LockConfigurationError for %s', (_label, options) => {
    expect(constructionError(options).option).toBe(options && typeof options === 'object' ? 'store' : 'options');
  });

  it.each<[string, unknown]>([
    ['a string', 'debug'],
    ['an object without warn and error', { log: () => undefined }],
  ])('throws LockConfigurationError for a logger that is %s', (_label, logger) => {
    expect(constructionError({ store, logger }).option).toBe('logger');
  });

  it('refuses bad per-call options and bad keys before they reach the store', async () => {
    const { store: recorded, calls } = recordingStore();
    const manager = new LockManager({ store: recorded, maxKeyLength: 1024 });
    await expect(manager.acquire('k', { ttl: -5 })).rejects.toBeInstanceOf(LockConfigurationError);
    await expect(manager.using('k', () => 1, { retry: { factor: 0 } })).rejects.toBeInstanceOf(LockConfigurationError);
    await expect(manager.acquire('🔒'.repeat(300))).rejects.toBeInstanceOf(LockKeyError);
    await expect(manager.tryAcquire('')).rejects.toBeInstanceOf(LockKeyError);
    await expect(manager.inspect(42 as unknown as string)).rejects.toBeInstanceOf(LockKeyError);
    expect(calls).toEqual([]);
    await manager.close();
  });
});

describe('LockManager retryAfter', () => {
  /** The `retryAfter` of the error a busy acquire of `key` throws. */
  async function retryAfterOf(manager: LockManager, key: string, options = {}): Promise<number | undefined> {
    const error = await manager.acquire(key, options).catch((caught: { retryAfter?: number }) => caught);
    return (error as { retryAfter?: number }).retryAfter;
  }

  it("is the holder's remaining lease before any hold of the template ended, and the usual hold after", async () => {
    const manager = new LockManager({ store: new MemoryLockStore(), ttl: '20s' });
    const held = await manager.acquire('job:1', { metricKey: 'job:<id>' });
    expect(await retryAfterOf(manager, 'job:1', { metricKey: 'job:<id>' })).toBe(20);
    await held.release();
    const again = await manager.acquire('job:1', { metricKey: 'job:<id>' });
    expect(await retryAfterOf(manager, 'job:1', { metricKey: 'job:<id>' })).toBe(1);
    // a direct call without a template has no usual hold to go by
    expect(await retryAfterOf(manager, 'job:1')).toBe(20);
    await again.release();
    await manager.close();
  });

  it('is what the option says: a number, or what its function returns from the contention', async () => {
    const seen: unknown[] = [];
    const manager = new LockManager({
      store: new MemoryLockStore(),
      retryAfter: (contention) => (seen.push(contention), 4.2),
    });
    const held = await manager.acquire('report', { metricKey: 'report' });
    expect(await retryAfterOf(manager, 'report', { metricKey: 'report' })).toBe(5);
    expect(seen).toEqual([
      { key: 'report', keyTemplate: 'report', remainingTime: expect.any(Number), waited: expect.any(Number) },
    ]);
    expect(await retryAfterOf(manager, 'report', { retryAfter: 0 })).toBe(0);
    await held.release();
    await manager.close();
  });

  it('falls back to its estimate, with a warning, when the function throws or gives no number', async () => {
    const warnings: string[] = [];
    const logger = { warn: (message: string) => void warnings.push(message), error: () => undefined };
    const manager = new LockManager({ store: new MemoryLockStore(), ttl: '3s', logger });
    const held = await manager.acquire('k');
    const broken = () => {
      throw new Error('oops\nforged');
    };
    expect(await retryAfterOf(manager, 'k', { retryAfter: broken })).toBe(3);
    expect(await retryAfterOf(manager, 'k', { retryAfter: () => Number.NaN })).toBe(3);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/^The retryAfter function of a direct call gave Error: oops\\nforged instead/);
    await held.release();
    await manager.close();
  });
});
