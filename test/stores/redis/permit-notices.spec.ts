import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import type { PermitRequest } from '../../../lib/interfaces/permit-store.interface.js';
import type { ReleaseWatch } from '../../../lib/interfaces/lease.interface.js';
import { RedisPermitStore } from '../../../lib/stores/redis/permits/redis-permit-store.js';
import { newToken } from '../../../lib/utils/token.js';
import { testRedisUrl, uniquePrefix } from '../../support/stores.js';

/** How long a waiter that no notice is for is given to wake anyway: any wake in that time is a spurious one. */
const QUIET = 300;
/** The longest a notice may take to wake the waiter it is for, on a loaded machine. */
const HEARD_WITHIN = 5000;

const cleanups: Array<() => unknown> = [];

afterEach(async () => {
  for (const undo of cleanups.splice(0).reverse()) await undo();
});

/**
 * How long a permit reserved for a waiter stays its own. The default, 20 ms, is how long a live process takes
 * to claim it; a reservation left unclaimed longer passes over the process's other places as gone (until its
 * next request). These tests claim only once they have watched the notices, which on a busy machine took
 * longer than 20 ms: the places behind were passed over, and their notice never sent.
 */
const HANDOFF_WINDOW = 60_000;

function permitStore(): RedisPermitStore {
  const client = new Redis(testRedisUrl());
  const store = new RedisPermitStore({ client, keyPrefix: prefix, handoffWindow: HANDOFF_WINDOW });
  cleanups.push(() => client.quit());
  cleanups.push(() => store.close());
  return store;
}

let prefix: string;
beforeEach(() => {
  prefix = uniquePrefix();
});

function permit(key: string, limit: number, waits = false): PermitRequest {
  return {
    key,
    token: newToken(),
    ttl: 30_000,
    fencing: false,
    shape: { limit },
    ...(waits ? { waiting: { ttl: 20_000 } } : {}),
  };
}

/** A refused permit waiter of `store`: its place in the line and its watch, opened in the line's order. */
async function waiter(store: RedisPermitStore, key: string, limit: number) {
  const request = permit(key, limit, true);
  const watch: ReleaseWatch = await store.watch(key);
  cleanups.push(() => watch.close());
  expect(await store.acquire(request)).toMatchObject({ acquired: false });
  return { request, watch };
}

/** Whether `heard` (a watch's `next()`) resolves within `ms`: its value, else 'asleep'. */
function within(heard: Promise<boolean>, ms: number): Promise<boolean | 'asleep'> {
  return Promise.race([heard, sleep(ms, undefined, { ref: false }).then(() => 'asleep' as const)]);
}

/** Every waiter asleep on its watch, as the engine's waiters sleep between two attempts. */
function asleep(waiters: ReadonlyArray<{ watch: ReleaseWatch }>): Map<unknown, Promise<boolean>> {
  return new Map(waiters.map((waiter) => [waiter, waiter.watch.next(60_000)]));
}

describe('RedisPermitStore release notices', () => {
  it('wakes only as many of a process’s waiters as permits were reserved for, longest waiting first', async () => {
    const store = permitStore();
    const holderStore = permitStore();
    const holder = permit('one-by-one', 1);
    expect(await holderStore.acquire(holder)).toEqual({ acquired: true });
    const waiters: Array<Awaited<ReturnType<typeof waiter>>> = [];
    for (let i = 0; i < 4; i++) waiters.push(await waiter(store, 'one-by-one', 1));
    const sleeping = asleep(waiters);

    let releasing = { store: holderStore, token: holder.token };
    for (const [index, next] of waiters.entries()) {
      expect(await releasing.store.release('one-by-one', releasing.token)).toBe(true);
      // the waiter whose place got the permit hears it; every later one sleeps on
      expect(await within(sleeping.get(next) as Promise<boolean>, HEARD_WITHIN)).toBe(true);
      const later = waiters.slice(index + 1);
      const still = await Promise.all(later.map((other) => within(sleeping.get(other) as Promise<boolean>, QUIET)));
      expect(still).toEqual(later.map(() => 'asleep'));
      expect(await store.acquire(next.request)).toEqual({ acquired: true });
      // as the engine does: a waiter granted its permit stops watching
      next.watch.close();
      releasing = { store, token: next.request.token };
    }
  });

  it('wakes one waiter per permit freed, in line order, and none beyond them', async () => {
    const store = permitStore();
    const holderStore = permitStore();
    const holders = [permit('two-at-once', 2), permit('two-at-once', 2)];
    for (const holder of holders) expect(await holderStore.acquire(holder)).toEqual({ acquired: true });
    const waiters: Array<Awaited<ReturnType<typeof waiter>>> = [];
    for (let i = 0; i < 3; i++) waiters.push(await waiter(store, 'two-at-once', 2));
    const sleeping = asleep(waiters);
    const heard = (index: number, ms: number) => within(sleeping.get(waiters[index]) as Promise<boolean>, ms);

    await holderStore.release('two-at-once', holders[0].token);
    expect(await heard(0, HEARD_WITHIN)).toBe(true);
    // the first has not claimed its permit yet: the second release is for the second waiter, not for it again
    await holderStore.release('two-at-once', holders[1].token);
    expect(await heard(1, HEARD_WITHIN)).toBe(true);
    expect(await heard(2, QUIET)).toBe('asleep');
    for (const granted of waiters.slice(0, 2)) expect(await store.acquire(granted.request)).toEqual({ acquired: true });
    expect(await store.acquire(waiters[2].request)).toMatchObject({ acquired: false });
  });
});
