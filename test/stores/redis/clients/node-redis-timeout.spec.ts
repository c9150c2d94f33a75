import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { LockManager } from '../../../../lib/core/lock-manager.js';
import { LockLostError } from '../../../../lib/errors/lock-lost.error.js';
import { LockStoreError } from '../../../../lib/errors/lock-store.error.js';
import { NODE_REDIS_COMMAND_TIMEOUT } from '../../../../lib/stores/redis/client/node-redis-port.js';
import { RedisLockStore } from '../../../../lib/stores/redis/redis.store.js';
import { resourceKeys } from '../../../../lib/stores/redis/resource-keys.js';
import { newToken } from '../../../../lib/utils/token.js';
import { nodeRedisClient, type NodeRedisClient } from '../../../support/client-stores.js';
import { blockEventLoop } from '../../../support/faults.js';
import { startRedisServer, type RedisServerHandle } from '../../../support/redis-server.js';
import { uniquePrefix } from '../../../support/stores.js';
import { failureOf } from '../../../support/timed-outcome.js';
import { storedToken } from '../../../support/stored-token.js';

/** How long past the command timeout a failure may take to surface on a loaded machine. */
const SLACK = 3000;

describe.each([6, 5] as const)('a RedisLockStore on node-redis %i when its server freezes (SIGSTOP)', (major) => {
  let server: RedisServerHandle;
  let client: NodeRedisClient;
  let store: RedisLockStore;
  let admin: Redis;
  let keyPrefix: string;

  beforeAll(async () => {
    server = await startRedisServer();
  });

  afterAll(() => server.stop());

  beforeEach(async () => {
    keyPrefix = uniquePrefix();
    client = nodeRedisClient(major, server.url);
    await client.connect();
    store = new RedisLockStore({ client: client as never, keyPrefix });
    admin = new Redis(server.url);
  });

  afterEach(async () => {
    server.resume();
    await store.close();
    await client.close();
    await admin.quit();
  });

  it('fails an acquire with LockStoreError within its command timeout; a retry with its token takes what landed', async () => {
    const token = newToken();
    server.pause();
    const { error, took } = await failureOf(() => store.acquire({ key: 'k', token, ttl: 30_000, fencing: false }));
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(`no answer within ${NODE_REDIS_COMMAND_TIMEOUT} ms (timeout)`);
    expect(took).toBeLessThan(NODE_REDIS_COMMAND_TIMEOUT + SLACK);
    server.resume();
    // answered in order: once PING is, the SET sent into the freeze has run
    await client.sendCommand(['PING']);
    // it landed, and stands against everyone else until its ttl, as a crashed holder's lease would
    expect(storedToken(await admin.get(resourceKeys(keyPrefix, 'k').lock))).toBe(token);
    const rival = new RedisLockStore({ client: admin, keyPrefix });
    expect(await rival.acquire({ key: 'k', token: newToken(), ttl: 5000, fencing: false })).toMatchObject({
      acquired: false,
    });
    // the caller's retry with the same token is granted (idempotent re-acquire), so it loses no time
    expect(await store.acquire({ key: 'k', token, ttl: 30_000, fencing: false })).toEqual({ acquired: true });
  });

  it('fails a release and an extend with LockStoreError within the command timeout, never a silent answer', async () => {
    const token = newToken();
    // scripts cached, so that the EVALSHAs sent into the freeze run when it ends
    await store.verify();
    expect(await store.acquire({ key: 'k', token, ttl: 30_000, fencing: false })).toEqual({ acquired: true });
    server.pause();
    for (const operation of [() => store.release('k', token), () => store.extend('k', token, 30_000)]) {
      const { error, took } = await failureOf(operation);
      expect(error).toBeInstanceOf(LockStoreError);
      expect(took).toBeLessThan(NODE_REDIS_COMMAND_TIMEOUT + SLACK);
    }
    server.resume();
    // the client keeps working, in order: the release ran late (its reply nobody's), so the lease is gone
    expect(await store.extend('k', token, 30_000)).toBe(false);
    expect(await admin.exists(resourceKeys(keyPrefix, 'k').lock)).toBe(0);
  });

  it('counts an answer that arrived while this process was blocked past the command timeout', async () => {
    const token = newToken();
    await store.verify();
    expect(await store.acquire({ key: 'k', token, ttl: 30_000, fencing: false })).toEqual({ acquired: true });
    const extended = store.extend('k', token, 30_000);
    // the EVALSHA is on the wire and answered at once, but this process reads nothing until the timeout is
    // past: the due timer runs before the socket is read, and must not fail a renewal the server made
    await new Promise((resolve) => setImmediate(resolve));
    blockEventLoop(NODE_REDIS_COMMAND_TIMEOUT + 300);
    await expect(extended).resolves.toBe(true);
  });

  it("aborts a renewed holder's signal with LockLostError once its validity runs out on a frozen server", async () => {
    const manager = new LockManager({ store, closeStore: false });
    try {
      const ttl = 3000;
      const lock = await manager.acquire('renewed', { ttl, autoRenew: true });
      const lost = new Promise<unknown>((resolve) =>
        lock.signal.addEventListener('abort', () => resolve(lock.signal.reason), { once: true }),
      );
      const frozen = performance.now();
      server.pause();
      const reason = await lost;
      expect(reason).toBeInstanceOf(LockLostError);
      expect(performance.now() - frozen).toBeLessThan(ttl + SLACK);
    } finally {
      server.resume();
      await manager.close();
    }
  });
});
