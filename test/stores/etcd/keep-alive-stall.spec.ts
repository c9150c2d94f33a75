import { EtcdLockStore } from '../../../lib/stores/etcd/etcd-lock-store.js';
import { newToken } from '../../../lib/utils/token.js';
import { startEtcdCluster, type EtcdClusterHandle } from '../../support/etcd-cluster.js';
import { blockEventLoop } from '../../support/faults.js';
import { uniquePrefix } from '../../support/stores.js';

/** How long the store waits for a member that answers nothing: short, so the stall below outlasts it. */
const TIMEOUT = 500;

describe('EtcdLockStore renewals when this process is blocked', () => {
  let cluster: EtcdClusterHandle;
  let store: EtcdLockStore;

  beforeAll(async () => {
    cluster = await startEtcdCluster(1);
  }, 90_000);

  afterAll(async () => {
    await store?.close();
    await cluster?.stop();
  });

  it('counts keep-alive answers that arrived while the event loop was blocked past the timeout', async () => {
    store = new EtcdLockStore({ hosts: cluster.hosts, keyPrefix: uniquePrefix(), timeout: TIMEOUT });
    const renewals = Array.from({ length: 20 }, (_, index) => ({
      key: `stalled:${index}`,
      token: newToken(),
      ttl: 10_000,
    }));
    for (const { key, token, ttl } of renewals) {
      expect(await store.acquire({ key, token, ttl, fencing: false })).toMatchObject({ acquired: true });
    }
    // the keep-alive lanes open on the first batch
    expect(await store.extendMany(renewals)).toEqual(renewals.map(() => true));
    const renewed = store.extendMany(renewals);
    // the keep-alives are on the wire and answered at once, but this process reads nothing until the timeout is
    // past: the due timer runs before the streams are read, and must not call the member silent
    await new Promise((resolve) => setImmediate(resolve));
    blockEventLoop(TIMEOUT + 400);
    expect(await renewed).toEqual(renewals.map(() => true));
  });
});
