import { Redis } from 'ioredis';
import type { PermitRequest } from '../../../lib/interfaces/permit-store.interface.js';
import { RedisPermitStore } from '../../../lib/stores/redis/permits/redis-permit-store.js';
import { newToken } from '../../../lib/utils/token.js';
import { commandsDuring, total } from '../../support/command-counts.js';
import { startRedisServer, type RedisServerHandle } from '../../support/redis-server.js';

let server: RedisServerHandle;
let admin: Redis;
let client: Redis;
let store: RedisPermitStore;

beforeAll(async () => {
  // a server of its own: its command counts are this test's alone
  server = await startRedisServer();
  admin = new Redis(server.url);
  client = new Redis(server.url);
  store = new RedisPermitStore({ client });
});

afterAll(async () => {
  await store.close();
  await client.quit();
  await admin.quit();
  await server.stop();
});

function permit(waits: boolean): PermitRequest {
  return {
    key: 'cost',
    token: newToken(),
    ttl: 30_000,
    fencing: false,
    shape: { limit: 3 },
    ...(waits ? { waiting: { ttl: 20_000 } } : {}),
  };
}

/**
 * One turn of a busy semaphore: a holder releases (its permit is reserved for the first in line), the waiter
 * claims it, and the releaser asks again at once and takes a place. Returns the releaser's new request.
 */
async function turn(holder: PermitRequest, waiter: PermitRequest): Promise<PermitRequest> {
  expect(await store.release('cost', holder.token)).toBe(true);
  expect(await store.acquire(waiter)).toEqual({ acquired: true });
  const again = permit(true);
  expect(await store.acquire(again)).toMatchObject({ acquired: false, ahead: 0 });
  return again;
}

describe('RedisPermitStore cost', () => {
  it('passes a permit of a full semaphore on through its line in at most 40 server commands', async () => {
    const holders = [permit(false), permit(false), permit(false)];
    for (const holder of holders) expect(await store.acquire(holder)).toEqual({ acquired: true });
    let waiter = permit(true);
    expect(await store.acquire(waiter)).toMatchObject({ acquired: false, ahead: 0 });
    const turns: Array<Record<string, number>> = [];
    // the first turn loads the scripts (EVALSHA, NOSCRIPT, EVAL) and is not counted
    for (let i = 0; i < 4; i++) {
      const holder = holders.shift() as PermitRequest;
      const next = waiter;
      holders.push(next);
      const counts = await commandsDuring(admin, async () => (waiter = await turn(holder, next)));
      if (i > 0) turns.push(counts);
    }
    for (const counts of turns) {
      // three scripts: the release, the claim, the new refusal
      expect(counts.evalsha).toBe(3);
      // TIME, the read of the resource and of the line, the holders, the lock key, once per script; the permit
      // and the place written and dropped; the guard and the keys' expiry checked (55 before the scripts read once)
      expect(total(counts)).toBeLessThanOrEqual(40);
    }
  });
});
