// A greedy process for greedy-processes.spec.ts: after "go" on stdin, takes KEY SECTIONS times in a row, each
// time at once after its release, with fencing. Each section writes to a protected resource on Redis that counts
// who is inside and refuses a fence not above the last one, then prints "done <sections> <violations> <ends>":
// the `Date.now()` at which each of its sections ended, for the spec to find the longest pause between holders.
// With WAIT_ONLY=1 it only asks once, prints "asked" and waits (the spec SIGKILLs it while it stands in line).
import { setTimeout as sleep } from 'node:timers/promises';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { LockManager } from '../../lib/core/lock-manager.js';
import { RedisLockStore } from '../../lib/stores/redis/redis.store.js';

const { REDIS_URL, KEY_PREFIX, KEY, SECTIONS, WAIT_ONLY } = process.env as Record<string, string>;

/** The protected resource: 1 when the writer is alone and its fence is the newest, 0 or -1 when not. */
const FENCED_WRITE = `
local inside = redis.call('INCR', KEYS[1])
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
local verdict = 1
if inside ~= 1 then verdict = 0 end
if tonumber(ARGV[1]) <= last then verdict = -1 end
redis.call('SET', KEYS[2], ARGV[1])
return verdict
`;

const store = new RedisLockStore({ client: new Redis(REDIS_URL), keyPrefix: KEY_PREFIX, ownsClient: true });
await store.verify();
const locks = new LockManager({ store });
const data = new Redis(REDIS_URL);
const [inside, lastFence] = [`${KEY_PREFIX}resource:inside`, `${KEY_PREFIX}resource:fence`];
const lines = createInterface({ input: process.stdin });
lines.on('close', () => process.exit(0));

if (WAIT_ONLY === '1') {
  void locks.acquire(KEY, { wait: 60_000, fencing: true }).catch(() => undefined);
  console.log('asked');
} else {
  console.log('ready');
  await new Promise<void>((resolve) => lines.once('line', () => resolve()));
  let violations = 0;
  const ends: number[] = [];
  for (let section = 0; section < Number(SECTIONS); section++) {
    await locks.using(
      KEY,
      async (lock) => {
        const verdict = (await data.eval(FENCED_WRITE, 2, inside, lastFence, String(lock.fence))) as number;
        if (verdict !== 1) violations++;
        await sleep(1);
        await data.decr(inside);
      },
      { ttl: 10_000, wait: 30_000, fencing: true, autoRenew: false },
    );
    ends.push(Date.now());
  }
  console.log(`done ${SECTIONS} ${violations} ${ends.join(',')}`);
  await locks.close();
  await data.quit();
}
