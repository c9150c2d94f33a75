import { MemoryLockStore } from '../stores/memory/memory.store.js';
import { LockManager } from '../core/lock-manager.js';
import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { DEFAULT_SETTINGS, type LockSettings } from './lock-settings.js';
import { SettingsMemo } from './settings-memo.js';

const settings = (ttl: number): LockSettings => ({ ...DEFAULT_SETTINGS, ttl });

describe('SettingsMemo', () => {
  it('reuses the settings of an earlier object with the same names and values', () => {
    const memo = new SettingsMemo();
    memo.set({ ttl: 1000, wait: 5 }, settings(1000));
    expect(memo.get({ ttl: 1000, wait: 5 })).toEqual(settings(1000));
  });

  it('resolves again for another value, another name, or the same names in another order', () => {
    const memo = new SettingsMemo();
    memo.set({ ttl: 1000, wait: 5 }, settings(1000));
    expect(memo.get({ ttl: 2000, wait: 5 })).toBeUndefined();
    expect(memo.get({ ttl: 1000, wait: 5, fencing: true })).toBeUndefined();
    expect(memo.get({ ttl: 1000 })).toBeUndefined();
    expect(memo.get({ wait: 5, ttl: 1000 })).toBeUndefined();
  });

  it('resolves again after the remembered object itself was changed', () => {
    const memo = new SettingsMemo();
    const options = { ttl: 1000 };
    memo.set(options, settings(1000));
    options.ttl = 2000;
    expect(memo.get(options)).toBeUndefined();
  });

  it('never remembers options holding an object, nor an object with a prototype of its own', () => {
    const memo = new SettingsMemo();
    const retry = { minDelay: 10 };
    memo.set({ retry }, settings(1000));
    expect(memo.get({ retry })).toBeUndefined();
    const inherited = Object.create({ ttl: 5000 }) as object;
    memo.set({}, settings(1000));
    expect(memo.get(inherited)).toBeUndefined();
  });
});

describe('LockManager with options written at each call', () => {
  let manager: LockManager;
  beforeEach(() => {
    manager = new LockManager({ store: new MemoryLockStore(), ttl: 30_000 });
  });
  afterEach(() => manager.close());

  it('honours a changed option on the next call and refuses a bad one after good ones', async () => {
    const options: { ttl: number; wait?: number } = { ttl: 10_000 };
    const first = await manager.acquire('memo:a', options);
    expect(first.ttl).toBe(10_000);
    await first.release();
    options.ttl = 20_000;
    const second = await manager.acquire('memo:a', options);
    expect(second.ttl).toBe(20_000);
    await second.release();
    await expect(manager.acquire('memo:a', { ttl: 20_000, wiat: 5 } as never)).rejects.toThrow(LockConfigurationError);
    await expect(manager.acquire('memo:a', { ttl: -1 })).rejects.toThrow(LockConfigurationError);
  });
});
