import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import { createStore } from '../../utils/create-store.js';
import { EtcdLockStore } from './etcd-lock-store.js';

/** The option a module configuration is refused for, or `undefined` when it is taken. */
async function refusedOption(options: Parameters<typeof createStore>[0]): Promise<string | undefined> {
  try {
    const { store } = createStore(options);
    await store.close();
    return undefined;
  } catch (error) {
    if (!(error instanceof LockConfigurationError)) throw error;
    return error.option;
  }
}

describe('LockModule options with etcd', () => {
  it('makes an EtcdLockStore the module owns', async () => {
    const created = createStore({ etcd: { hosts: ['127.0.0.1:1'] }, keyPrefix: 'app:' });
    expect(created.store).toBeInstanceOf(EtcdLockStore);
    expect(created).toMatchObject({ owned: true, local: false });
    await created.store.close();
  });

  it.each([
    ['redis beside it', { etcd: { hosts: 'a:1' }, redis: 'redis://127.0.0.1:1' }, 'etcd'],
    ['a Redis-only option', { etcd: { hosts: 'a:1' }, handoffWindow: 20 }, 'handoffWindow'],
    ['replicaAck', { etcd: { hosts: 'a:1' }, replicaAck: { replicas: 1, timeout: 50 } }, 'replicaAck'],
    ['its own keyPrefix', { etcd: { hosts: 'a:1', keyPrefix: 'x:' } }, 'etcd.keyPrefix'],
    ['no hosts', { etcd: {} }, 'etcd.hosts'],
  ])('refuses %s, naming the option', async (_label, options, option) => {
    expect(await refusedOption(options as never)).toBe(option);
  });
});
