import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import { createStore } from '../registry.js';
import { checkModuleOptions } from '../../lock.module-options.js';
import { EtcdLockStore } from './etcd-lock-store.js';

/** The option a module configuration is refused for, or `undefined` when it is taken. */
function refusedOption(options: object): string | undefined {
  try {
    checkModuleOptions(options);
    return undefined;
  } catch (error) {
    if (!(error instanceof LockConfigurationError)) throw error;
    return error.option;
  }
}

describe('LockModule options with etcd', () => {
  it('plans an EtcdLockStore with the module keyPrefix, which the module owns', async () => {
    const checked = checkModuleOptions({ etcd: { hosts: ['127.0.0.1:1'] }, keyPrefix: 'app:' });
    expect(checked.store).toEqual({ kind: 'etcd', options: { hosts: ['127.0.0.1:1'], keyPrefix: 'app:' } });
    const created = await createStore(checked.store);
    expect(created.store).toBeInstanceOf(EtcdLockStore);
    expect(created.owned).toBe(true);
    await created.store.close();
  });

  it.each([
    ['redis beside it', { etcd: { hosts: 'a:1' }, redis: 'redis://127.0.0.1:1' }, 'etcd'],
    ['a Redis-only option', { etcd: { hosts: 'a:1' }, handoffWindow: 20 }, 'handoffWindow'],
    ['replicaAck', { etcd: { hosts: 'a:1' }, replicaAck: { replicas: 1, timeout: 50 } }, 'replicaAck'],
    ['acceptEvictionRisk', { etcd: { hosts: 'a:1' }, acceptEvictionRisk: true }, 'acceptEvictionRisk'],
    ['its own keyPrefix', { etcd: { hosts: 'a:1', keyPrefix: 'x:' } }, 'etcd.keyPrefix'],
    ['an unknown etcd option', { etcd: { hosts: 'a:1', endpoints: ['a:1'] } }, 'etcd.endpoints'],
    ['no hosts', { etcd: {} }, 'etcd.hosts'],
    ['a member without a port', { etcd: { hosts: 'etcd-0' } }, 'etcd.hosts'],
    ['credentials that are no TLS credentials', { etcd: { hosts: 'a:1', credentials: 'x' } }, 'etcd.credentials'],
    ['an empty etcd option', { etcd: undefined }, 'etcd'],
    ['a module ttl under 1 s', { etcd: { hosts: 'a:1' }, ttl: 500 }, 'ttl'],
  ])('refuses %s, naming the option', (_label, options, option) => {
    expect(refusedOption(options)).toBe(option);
  });
});
