import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import type { ReleaseWatch } from '../../../lib/interfaces/lease.interface.js';
import type { PermitRequest } from '../../../lib/interfaces/permit-store.interface.js';
import { RedisPermitStore } from '../../../lib/stores/redis/permits/redis-permit-store.js';
import { newToken } from '../../../lib/utils/token.js';
import { commandsDuring } from '../../support/command-counts.js';
import { startFaultProxy } from '../../support/fault-proxy.js';
import { ownRedisServer } from '../../support/own-redis-server.js';

/** How long a waiter that no notice is for is given to wake anyway: any wake in that time is a spurious one. */
const QUIET = 300;
/** The longest a notice may take to wake the waiter it is for, on a loaded machine. */
const HEARD_WITHIN = 5000;

const own = ownRedisServer();
const { cleanups } = own;

/** A store of its own connection and owner id: a process of its own, as the server sees it. */
function process(client = new Redis(own.server.url)): RedisPermitStore {
  const store = new RedisPermitStore({ client });
  cleanups.push(() => client.disconnect());
  cleanups.push(() => store.close());
  return store;
}

function permit(limit: number, waits = false): PermitRequest {
  return {
    key: 'direct',
    token: newToken(),
    ttl: 30_000,
    fencing: true,
    shape: { limit },
    ...(waits ? { waiting: { ttl: 20_000, direct: true } } : {}),
  };
}

/** A refused waiter of `store` as the engine waits: its watch (with its token) open, its place in the line. */
async function waiter(
  store: RedisPermitStore,
  ahead: number,
): Promise<{ request: PermitRequest; watch: ReleaseWatch }> {
  const request = permit(1, true);
  const watch = await store.watch(request.key, undefined, request.token);
  cleanups.push(() => watch.close());
  expect(await store.acquire(request)).toMatchObject({ acquired: false, ahead });
  return { request, watch };
}

/** Whether `heard` (a watch's `next()`) resolves within `ms`: its value, else 'asleep'. */
function within(heard: Promise<boolean>, ms: number): Promise<boolean | 'asleep'> {
  return Promise.race([heard, sleep(ms, undefined, { ref: false }).then(() => 'asleep' as const)]);
}

/**
 * A permit of limit 1 released while two waiters of two processes stand in line: the release grants it to the
 * first (`leaving`, whose watch has woken); the second (`next`) still sleeps on `bWakes`.
 */
async function grantedToFirstOfTwo(leaving: RedisPermitStore) {
  const [releaser, next] = [process(), process()];
  const holder = permit(1);
  await releaser.acquire(holder);
  const a = await waiter(leaving, 0);
  const b = await waiter(next, 1);
  const aWakes = a.watch.next(60_000);
  const bWakes = b.watch.next(60_000);
  await releaser.release('direct', holder.token);
  expect(await within(aWakes, HEARD_WITHIN)).toBe(true);
  return { releaser, leaving, next, a, b, bWakes };
}

describe('RedisPermitStore direct grants', () => {
  it('grants a freed permit to the first in line in the release itself and wakes that waiter alone', async () => {
    const [releaser, first, second] = [process(), process(), process()];
    const holder = permit(1);
    expect(await releaser.acquire(holder)).toMatchObject({ acquired: true });
    const a = await waiter(first, 0);
    const b = await waiter(second, 1);
    const aWakes = a.watch.next(60_000);
    const bWakes = b.watch.next(60_000);
    // the release is the only request: the waiter holds its permit without asking again
    const counts = await commandsDuring(own.admin, async () => {
      expect(await releaser.release('direct', holder.token)).toBe(true);
      expect(await within(aWakes, HEARD_WITHIN)).toBe(true);
    });
    expect(counts.evalsha).toBe(1);
    const grant = first.takeGrant('direct', a.request.token);
    expect(grant).toEqual({ fence: expect.any(Number), sentAt: expect.any(Number) });
    expect(first.takeGrant('direct', a.request.token)).toBeUndefined();
    expect(await within(bWakes, QUIET)).toBe('asleep');
    expect(await second.inspect('direct')).toMatchObject({ holders: 1, waiting: 1 });
    // the permit is the first waiter's lease: its token releases it, and the line moves on
    expect(await first.release('direct', a.request.token)).toBe(true);
    expect(await within(bWakes, HEARD_WITHIN)).toBe(true);
    expect(second.takeGrant('direct', b.request.token)?.fence).toBeGreaterThan(grant?.fence ?? Infinity);
  });

  it('passes over a waiter whose process is gone and grants the next in line', async () => {
    const [releaser, gone, next] = [process(), process(), process()];
    const holder = permit(1);
    await releaser.acquire(holder);
    await waiter(gone, 0);
    const b = await waiter(next, 1);
    // its process ends without giving up its place: nobody listens on its channel any more
    const channels = (await own.admin.pubsub('CHANNELS')).length;
    await gone.close();
    while ((await own.admin.pubsub('CHANNELS')).length === channels) await sleep(10);
    const bWakes = b.watch.next(60_000);
    expect(await releaser.release('direct', holder.token)).toBe(true);
    expect(await within(bWakes, HEARD_WITHIN)).toBe(true);
    expect(next.takeGrant('direct', b.request.token)).toBeDefined();
    expect(await releaser.inspect('direct')).toMatchObject({ holders: 1, waiting: 0 });
  });

  it('ends the permit granted to a waiter that gives up its place before taking it', async () => {
    const { releaser, leaving, next, a, b, bWakes } = await grantedToFirstOfTwo(process());
    // its wait ended meanwhile: it leaves, and the permit a release granted it passes on
    await leaving.leaveLine('direct', a.request.token);
    expect(leaving.takeGrant('direct', a.request.token)).toBeUndefined();
    expect(await within(bWakes, HEARD_WITHIN)).toBe(true);
    expect(next.takeGrant('direct', b.request.token)).toBeDefined();
    expect(await releaser.inspect('direct')).toMatchObject({ holders: 1, waiting: 0 });
  });

  it('answers a waiter that asks again before its notice came with the permit granted to it', async () => {
    const [releaser, asking] = [process(), process()];
    const holder = permit(1);
    await releaser.acquire(holder);
    const a = await waiter(asking, 0);
    await releaser.release('direct', holder.token);
    expect(await asking.acquire(a.request)).toEqual({ acquired: true, fence: expect.any(Number) });
    // the notice is spent: nothing is taken twice
    await sleep(50);
    expect(asking.takeGrant('direct', a.request.token)).toBeUndefined();
    expect(await releaser.inspect('direct')).toMatchObject({ holders: 1, waiting: 0 });
  });

  it('gives back a permit granted to a waiter that left during an outage, once the server is reachable again', async () => {
    const proxy = await startFaultProxy(own.server.url);
    cleanups.push(() => proxy.close());
    const cut = new Redis(proxy.url);
    const { releaser, leaving, next, a, b, bWakes } = await grantedToFirstOfTwo(process(cut));
    // the waiter's wait ends while its process cannot reach the server: its leaving fails, so its store
    // gives the granted permit back, token-checked, and keeps trying for as long as the outage lasts (its
    // commands fail at once meanwhile, as the store's own client's fail by their deadline)
    cut.options.enableOfflineQueue = false;
    await proxy.refuse(true);
    proxy.cutAll();
    await expect(leaving.leaveLine('direct', a.request.token)).rejects.toThrow();
    expect(await within(bWakes, 1500)).toBe('asleep');
    await proxy.refuse(false);
    // held until its ttl (30 s) had the give-back stopped trying; the client reconnects by its own backoff first
    expect(await within(bWakes, 2 * HEARD_WITHIN)).toBe(true);
    expect(next.takeGrant('direct', b.request.token)).toBeDefined();
    expect(await releaser.inspect('direct')).toMatchObject({ holders: 1, waiting: 0 });
  });
});
