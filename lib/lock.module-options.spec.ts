import { LockConfigurationError } from './errors/lock-configuration.error.js';
import { MemoryLockStore } from './stores/memory/memory.store.js';
import { checkModuleOptions } from './lock.module-options.js';
import { refusalOf } from '../test/support/refusal.js';

/** The error `checkModuleOptions` throws for `options`, or a failure when it throws none. */
function refusal(options: unknown): LockConfigurationError {
  return refusalOf(() => checkModuleOptions(options), options);
}

describe('checkModuleOptions', () => {
  it('plans the memory store only when no store option is given at all', () => {
    expect(checkModuleOptions({}).store.kind).toBe('memory');
    expect(checkModuleOptions({ ttl: '10s' }).store.kind).toBe('memory');
    expect(checkModuleOptions({ store: new MemoryLockStore() }).store.kind).toBe('given');
  });

  it.each<[string, string, unknown]>([
    ['redis: undefined', 'redis', undefined],
    ['redis: null', 'redis', null],
    ["redis: ''", 'redis', ''],
    ['redlock: undefined', 'redlock', undefined],
    ['store: null', 'store', null],
  ])('refuses %s, naming the option and the unset variable it usually is', (_label, option, value) => {
    const error = refusal({ [option]: value });
    expect(error.option).toBe(option);
    expect(error.message).toMatch(/unset environment variable/);
    expect(error.message).toMatch(/MemoryLockStore/);
  });

  it('refuses options that are no object, as a forRootAsync factory that forgot to return them gives', () => {
    expect(refusal(undefined).message).toMatch(/forRootAsync\(\) factory return its options/);
  });

  it('refuses options of a created store beside a store of your own', () => {
    for (const option of ['keyPrefix', 'releaseNotices', 'handoffWindow'] as const) {
      const error = refusal({ store: new MemoryLockStore(), [option]: option === 'keyPrefix' ? 'app:' : 10 });
      expect(error.option).toBe(option);
      expect(error.message).toMatch(/set it on your own store/);
    }
  });

  it.each<[string, object, string, RegExp]>([
    ['ttl: 2', { ttl: 2 }, 'ttl', /at least 100 ms/],
    ['ttl: 99', { ttl: 99 }, 'ttl', /at least 100 ms/],
    ['a handoffWindow over half the ttl', { ttl: '1s', handoffWindow: 501 }, 'handoffWindow', /at most half the ttl/],
    ['handoffWindow: 1e9', { redis: 'redis://127.0.0.1:1', handoffWindow: 1e9 }, 'handoffWindow', /half the ttl/],
    ["keyPrefix: ''", { redis: 'redis://127.0.0.1:1', keyPrefix: '' }, 'keyPrefix', /non-empty/],
    ['a keyPrefix with a new line', { keyPrefix: 'a\nb:' }, 'keyPrefix', /printable/],
    ["keyPrefix: '*'", { keyPrefix: '*' }, 'keyPrefix', /SCAN MATCH/],
    [
      'a driftFactor of a third',
      { redlock: { nodes: ['redis://a', 'redis://b', 'redis://c'], driftFactor: 0.34 } },
      'redlock.driftFactor',
      /1\/3/,
    ],
    ['a retryAfter that is not whole seconds', { retryAfter: 1.5 }, 'retryAfter', /whole seconds/],
  ])('refuses %s, with the reason the design gives', (_label, options, option, reason) => {
    const error = refusal(options);
    expect(error.option).toBe(option);
    expect(error.message).toMatch(reason);
  });

  it('accepts the smallest ttl the default hand-off window allows, and a ttl of a Redlock close to its bound', () => {
    expect(() => checkModuleOptions({ ttl: 100 })).not.toThrow();
    expect(() => checkModuleOptions({ ttl: 100, handoffWindow: 50 })).not.toThrow();
    const nodes = ['redis://a', 'redis://b', 'redis://c'];
    expect(() => checkModuleOptions({ redlock: { nodes, driftFactor: 0.3 }, ttl: '1s' })).not.toThrow();
    expect(refusal({ redlock: { nodes, driftFactor: 0.33 }, ttl: 100 }).message).toMatch(/clock-drift allowance/);
  });

  it.each<[string, object, string, string]>([
    ['a module option', { fencng: true }, 'fencng', 'fencing'],
    ['a connection option', { redisUrl: 'redis://db:6379' }, 'redisUrl', 'redis'],
    ['a retry option', { retry: { minDelai: 10 } }, 'retry.minDelai', 'minDelay'],
    ['a telemetry switch', { telemetry: { resolvedKey: true } }, 'telemetry.resolvedKey', 'resolvedKeys'],
    [
      'a replicaAck field',
      { redis: 'redis://db', replicaAck: { replica: 1, timeout: 50 } },
      'replicaAck.replica',
      'replicas',
    ],
    ['a Redlock option', { redlock: { nodez: ['redis://a'] } }, 'redlock.nodez', 'nodes'],
    ['a cluster config field', { redis: { cluster: [7000], option: {} } }, 'redis.option', 'options'],
  ])('refuses an unknown name in %s and suggests the closest known one', (_label, options, option, closest) => {
    const error = refusal(options);
    expect(error.option).toBe(option);
    expect(error.message).toContain(`did you mean "${closest}"?`);
  });

  it('says that keyPrefix and handoffWindow go beside redlock, not in it', () => {
    expect(refusal({ redlock: { nodes: [], keyPrefix: 'app:' } }).message).toMatch(/it is a module option/);
  });

  it('leaves ioredis options to ioredis', () => {
    expect(checkModuleOptions({ redis: { host: 'db', port: 6380, enableAutoPipelining: true } }).store.kind).toBe(
      'options',
    );
  });
});
