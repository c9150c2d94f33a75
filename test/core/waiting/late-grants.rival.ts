// A second lock holder in its own process, for late-grants.spec.ts: told `take` (or `take <label>`), it waits
// until someone else holds the key (the holder labelled so), then takes it, waiting its turn, and stays
// inside until told `leave`. Inside, it counts itself in a shared Redis counter and touches a file, so that a
// test whose event loop is blocked can see it entered.
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LockManager } from '../../../lib/core/lock-manager.js';
import { RedisLockStore } from '../../../lib/stores/redis/redis.store.js';

const { REDIS_URL, KEY_PREFIX, KEY, INSIDE_KEY, ENTERED_FILE, TTL } = process.env as Record<string, string>;

const data = new Redis(REDIS_URL);
const store = new RedisLockStore({ client: new Redis(REDIS_URL), keyPrefix: KEY_PREFIX, ownsClient: true });
const locks = new LockManager({ store });
let leave: () => void;
const told = new Promise<void>((resolve) => (leave = resolve));

/** Whether the key is held, by the holder labelled `label` when one is given. */
async function heldBy(label: string | undefined): Promise<boolean> {
  const info = await locks.inspect(KEY);
  return info.held && (label === undefined || info.holder?.label === label);
}

async function take(label: string | undefined): Promise<void> {
  // only once someone holds it: the point is to take it from under a grant that is still on its way
  while (!(await heldBy(label))) await sleep(2);
  await locks.using(
    KEY,
    async (lock) => {
      const inside = await data.incr(INSIDE_KEY);
      writeFileSync(ENTERED_FILE, String(inside));
      console.log(`entered ${inside}`);
      await told;
      const held = lock.isHeld && !lock.signal.aborted;
      await data.decr(INSIDE_KEY);
      console.log(`left ${JSON.stringify({ held })}`);
    },
    { ttl: Number(TTL), wait: 10_000 },
  );
  await locks.close();
  await data.quit();
  console.log('done');
}

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const [command, label] = line.split(' ');
  if (command === 'take') void take(label);
  if (line === 'leave') leave();
});
// the test process holds our stdin: when it goes away, so do we
lines.on('close', () => process.exit(0));
await store.verify();
console.log('ready');
