import { Redis } from 'ioredis';
import type { PermitRequest } from '../../../lib/interfaces/permit-store.interface.js';
import { permitKeys } from '../../../lib/stores/redis/permits/permit-keys.js';
import { RedisPermitStore } from '../../../lib/stores/redis/permits/redis-permit-store.js';
import { newToken } from '../../../lib/utils/token.js';
import { storedPermitState } from '../../support/permit-state.js';
import { testRedisUrl, uniquePrefix } from '../../support/stores.js';

/** More places than any line of a real resource is expected to hold. */
const PLACES = 400;

let admin: Redis;
let client: Redis;
let store: RedisPermitStore;
let prefix: string;

beforeAll(() => {
  admin = new Redis(testRedisUrl());
  client = new Redis(testRedisUrl());
  prefix = uniquePrefix();
  // notices off: every waiter claims its turn by asking again, as a process without pub/sub does
  store = new RedisPermitStore({ client, keyPrefix: prefix, releaseNotices: false, handoffWindow: 60_000 });
});

afterAll(async () => {
  await store.close();
  await client.quit();
  await admin.quit();
});

function permit(waits: boolean): PermitRequest {
  return {
    key: 'long',
    token: newToken(),
    ttl: 60_000,
    fencing: true,
    shape: { limit: 1 },
    holder: 'a holder record: with colons, spaces and ünïcode',
    ...(waits ? { waiting: { ttl: 60_000 } } : {}),
  };
}

describe('RedisPermitStore permit state', () => {
  it('keeps a line of hundreds of places in their order, in one value, and deletes it with the last', async () => {
    const first = permit(false);
    expect(await store.acquire(first)).toMatchObject({ acquired: true });
    const waiters = Array.from({ length: PLACES }, () => permit(true));
    for (const [index, waiter] of waiters.entries())
      expect(await store.acquire(waiter)).toMatchObject({ acquired: false, ahead: index });
    const stored = await storedPermitState(admin, prefix, 'long');
    expect(stored).toEqual({ shape: 'limit:1', permits: [first.token], places: waiters.map((w) => w.token) });
    expect(await admin.strlen(permitKeys(prefix, 'long').state)).toBeGreaterThan(PLACES * 40);

    let holder = first;
    let lastFence = 0;
    for (const [index, waiter] of waiters.entries()) {
      expect(await store.release('long', holder.token)).toBe(true);
      // the freed permit is reserved for the first in line: the one behind it does not overtake it
      if (index + 1 < waiters.length)
        expect(await store.acquire(waiters[index + 1])).toMatchObject({ acquired: false, ahead: 1 });
      const granted = await store.acquire(waiter);
      expect(granted).toMatchObject({ acquired: true });
      // fences grow with every grant, and the µs clock they start from is kept whole
      const fence = (granted as { fence: number }).fence;
      expect(fence).toBeGreaterThan(lastFence);
      expect(Number.isSafeInteger(fence)).toBe(true);
      lastFence = fence;
      holder = waiter;
    }
    const state = await store.inspect('long');
    expect(state.permits).toEqual([
      expect.objectContaining({ fence: lastFence, holder: 'a holder record: with colons, spaces and ünïcode' }),
    ]);
    expect(await store.release('long', holder.token)).toBe(true);
    expect(await admin.exists(permitKeys(prefix, 'long').state, permitKeys(prefix, 'long').lock)).toBe(0);
  });

  it('expires with its last permit or place, never later', async () => {
    const holder = { ...permit(false), key: 'brief', ttl: 5_000 };
    const waiter = { ...permit(true), key: 'brief', waiting: { ttl: 8_000 } };
    expect(await store.acquire(holder)).toMatchObject({ acquired: true });
    expect(await store.acquire(waiter)).toMatchObject({ acquired: false });
    const left = await admin.pttl(permitKeys(prefix, 'brief').state);
    expect(left).toBeGreaterThan(7_000);
    expect(left).toBeLessThanOrEqual(8_000);
  });
});
