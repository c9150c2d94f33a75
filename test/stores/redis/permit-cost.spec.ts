import { Redis } from 'ioredis';
import type { ReleaseWatch } from '../../../lib/interfaces/lease.interface.js';
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
    ...(waits ? { waiting: { ttl: 20_000, direct: true } } : {}),
  };
}

/** The watch of a waiter's place: the notice of the permit a release grants it directly wakes it. */
function watchFor(request: PermitRequest): Promise<ReleaseWatch> {
  return store.watch('cost', undefined, request.token);
}

/**
 * One turn of a busy semaphore: a holder releases (its permit is granted to the first in line, whose process
 * alone is told: here the releaser's own, in the reply), the waiter holds it without asking again, and the releaser asks again at once and takes a
 * place. Returns the releaser's new request and its watch.
 */
async function turn(
  holder: PermitRequest,
  waiter: PermitRequest,
  watch: ReleaseWatch,
): Promise<[PermitRequest, ReleaseWatch]> {
  expect(await store.release('cost', holder.token)).toBe(true);
  expect(await watch.next(5000)).toBe(true);
  expect(store.takeGrant('cost', waiter.token)).toMatchObject({ fence: 0 });
  watch.close();
  const again = permit(true);
  expect(await store.acquire(again)).toMatchObject({ acquired: false, ahead: 0 });
  return [again, await watchFor(again)];
}

describe('RedisPermitStore cost', () => {
  it('passes a permit of a full semaphore on through its line in at most 11 server commands', async () => {
    const holders = [permit(false), permit(false), permit(false)];
    for (const holder of holders) expect(await store.acquire(holder)).toEqual({ acquired: true });
    let waiter = permit(true);
    expect(await store.acquire(waiter)).toMatchObject({ acquired: false, ahead: 0 });
    let watch = await watchFor(waiter);
    const turns: Array<Record<string, number>> = [];
    // the first turn loads the scripts (EVALSHA, NOSCRIPT, EVAL) and is not counted
    for (let i = 0; i < 4; i++) {
      const holder = holders.shift() as PermitRequest;
      const next = waiter;
      holders.push(next);
      const counts = await commandsDuring(admin, async () => ([waiter, watch] = await turn(holder, next, watch)));
      if (i > 0) turns.push(counts);
    }
    watch.close();
    for (const counts of turns) {
      // two scripts: the release that grants the first in line (no claim follows), the new refusal; each reads
      // the clock, the resource's permit state and the lock key once and writes the state once; the grant pushes
      // the guard (the waiter is of the releaser's process: told in the release's reply, no notice). 26 while
      // the state was three keys, each step a command of its own
      expect(counts).toEqual({ evalsha: 2, time: 2, get: 4, set: 2, pexpire: 1 });
      expect(total(counts)).toBeLessThanOrEqual(11);
    }
  });
});
