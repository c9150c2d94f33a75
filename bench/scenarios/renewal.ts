import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import Redlock from 'redlock';
import { Mutex } from 'redis-semaphore';
import { type Lock, LockManager, RedisLockStore } from '../../lib/index.js';

/** Leases held under a library's own auto-renewal, for scenario 8. */
export interface Holding {
  /** Pipelines the library's client has sent so far (ioredis `pipeline()` calls). */
  pipelines(): number;
  /** Leases the library has reported lost so far. */
  lost(): number;
  release(): Promise<void>;
}

/** How one contender holds many leases and keeps them alive. */
export interface Holder {
  readonly name: string;
  /** What drives renewal, shown under the table. */
  readonly renewal: string;
  hold(url: string, count: number, ttl: number): Promise<Holding>;
}

/** A client whose `pipeline()` calls are counted. */
function countedClient(url: string): { client: Redis; pipelines: () => number } {
  const client = new Redis(url);
  let pipelines = 0;
  const original = client.pipeline.bind(client);
  client.pipeline = ((...args: Parameters<Redis['pipeline']>) => {
    pipelines++;
    return original(...args);
  }) as Redis['pipeline'];
  return { client, pipelines: () => pipelines };
}

const keyOf = (index: number): string => `lease:${index}`;
/** Leases per renewal call of the hand-written floor, and what batched renewal is expected to send. */
export const BATCH = 500;

const FLOOR_EXTEND = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;
const FLOOR_RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** By hand: one interval at ttl/3 renews every lease in pipelines of 500 token-checked PEXPIREs. */
const floorHolder: Holder = {
  name: 'floor',
  renewal: `one setInterval at ttl/3, pipelines of ${BATCH} EVALSHA (token-checked PEXPIRE)`,
  async hold(url, count, ttl) {
    const { client, pipelines } = countedClient(url);
    const extendSha = (await client.script('LOAD', FLOOR_EXTEND)) as string;
    const releaseSha = (await client.script('LOAD', FLOOR_RELEASE)) as string;
    const tokens = Array.from({ length: count }, () => randomUUID());
    await Promise.all(tokens.map((token, i) => client.set(keyOf(i), token, 'PX', ttl, 'NX')));
    let lost = 0;
    const inBatches = async (sha: string, args: Array<string | number>): Promise<void> => {
      const sends: Array<Promise<unknown>> = [];
      for (let start = 0; start < count; start += BATCH) {
        const pipeline = client.pipeline();
        for (let i = start; i < Math.min(count, start + BATCH); i++)
          pipeline.evalsha(sha, 1, keyOf(i), tokens[i], ...args);
        sends.push(
          pipeline.exec().then((replies) => {
            for (const [error, reply] of replies ?? []) if (error || reply === 0) lost++;
          }),
        );
      }
      await Promise.all(sends);
    };
    const timer = setInterval(() => void inBatches(extendSha, [ttl]).catch(() => undefined), ttl / 3);
    return {
      pipelines,
      lost: () => lost,
      async release() {
        clearInterval(timer);
        await inBatches(releaseSha, []);
        await client.quit();
      },
    };
  },
};

/** This project: one LockManager, `acquire({ autoRenew: true })`, its LeaseRenewer batches the renewals. */
const nestjsLockHolder: Holder = {
  name: 'nestjs-lock',
  renewal:
    'LeaseRenewer: one timer, renews at ttl/3 (up to ttl/6 early to share batches), one EXTEND_MANY call per 500; ' +
    'taken with wait: ttl, so a grant that came back after its validity on a busy machine is asked for again',
  async hold(url, count, ttl) {
    const { client, pipelines } = countedClient(url);
    const store = new RedisLockStore({ client, ownsClient: true });
    const manager = new LockManager({ store, ttl });
    await manager.verify();
    const locks: Lock[] = await Promise.all(
      Array.from({ length: count }, (_, i) => manager.acquire(keyOf(i), { autoRenew: true, wait: ttl })),
    );
    return {
      pipelines,
      lost: () => locks.filter((lock) => lock.signal.aborted).length,
      async release() {
        await manager.releaseAll(locks);
        await manager.close();
      },
    };
  },
};

/** node-redlock: `using()` per lease, each extended by its own timer `automaticExtensionThreshold` before expiry. */
const redlockHolder: Holder = {
  name: 'redlock',
  renewal: 'using() per lease: one timer each, EVALSHA extend 500 ms (automaticExtensionThreshold) before expiry',
  async hold(url, count, ttl) {
    const { client, pipelines } = countedClient(url);
    const redlock = new Redlock([client]);
    redlock.on('error', () => undefined);
    let lost = 0;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    let acquired = 0;
    let allAcquired!: () => void;
    const ready = new Promise<void>((resolve) => (allAcquired = resolve));
    const runs = Array.from({ length: count }, (_, i) =>
      redlock.using([keyOf(i)], ttl, async (signal) => {
        if (++acquired === count) allAcquired();
        await finished;
        if (signal.aborted) lost++;
      }),
    );
    await ready;
    return {
      pipelines,
      lost: () => lost,
      async release() {
        finish();
        await Promise.allSettled(runs);
        await redlock.quit();
      },
    };
  },
};

/** redis-semaphore: a Mutex per lease, each refreshed by its own setInterval at 0.8 × lockTimeout. */
const redisSemaphoreHolder: Holder = {
  name: 'redis-semaphore',
  renewal: 'Mutex per lease: one setInterval each at 0.8 × lockTimeout, EVALSHA refresh',
  async hold(url, count, ttl) {
    const { client, pipelines } = countedClient(url);
    let lost = 0;
    const mutexes = Array.from(
      { length: count },
      (_, i) => new Mutex(client, keyOf(i), { lockTimeout: ttl, onLockLost: () => void lost++ }),
    );
    await Promise.all(mutexes.map((mutex) => mutex.acquire()));
    return {
      pipelines,
      lost: () => lost,
      async release() {
        await Promise.all(mutexes.map((mutex) => mutex.release()));
        await client.quit();
      },
    };
  },
};

export const HOLDERS: readonly Holder[] = [floorHolder, nestjsLockHolder, redlockHolder, redisSemaphoreHolder];

/** Lets leases reach their steady renewal rhythm before measuring. */
export async function settle(ttl: number): Promise<void> {
  await sleep(ttl);
}
