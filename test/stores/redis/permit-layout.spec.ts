import { Redis } from 'ioredis';
import { LockStoreError } from '../../../lib/errors/lock-store.error.js';
import type { PermitRequest } from '../../../lib/interfaces/permit-store.interface.js';
import { toClientPort } from '../../../lib/stores/redis/client/client-port.js';
import { permitKeys } from '../../../lib/stores/redis/permits/permit-keys.js';
import { RedisPermitStore } from '../../../lib/stores/redis/permits/redis-permit-store.js';
import { RedisListing } from '../../../lib/stores/redis/redis-listing.js';
import { newToken } from '../../../lib/utils/token.js';
import { testRedisUrl, uniquePrefix } from '../../support/stores.js';

let admin: Redis;
let client: Redis;
let store: RedisPermitStore;
let prefix: string;

beforeAll(() => {
  admin = new Redis(testRedisUrl());
  client = new Redis(testRedisUrl());
});

beforeEach(() => {
  prefix = uniquePrefix();
  store = new RedisPermitStore({ client, keyPrefix: prefix });
});

afterEach(() => store.close());

afterAll(async () => {
  await client.quit();
  await admin.quit();
});

function permit(key: string): PermitRequest {
  return { key, token: newToken(), ttl: 30_000, fencing: false, shape: { limit: 1 } };
}

/**
 * Writes what the permit scripts of the earlier layout kept for a semaphore of limit 1 with one permit held:
 * a hash at the state's name (shape and the permit's record) and the sorted set of permits beside it.
 */
async function plantEarlierLayout(key: string, token: string): Promise<void> {
  const names = permitKeys(prefix, key);
  const [seconds] = await admin.time();
  const expiry = Number(seconds) * 1000 + 30_000;
  await admin.hset(names.state, 'shape', 'limit:1', `p:${token}`, 'p:0:');
  await admin.zadd(`${names.lock}:permits`, expiry, token);
  await admin.set(names.lock, '#', 'PX', 30_000);
  for (const name of [names.state, `${names.lock}:permits`]) await admin.pexpireat(name, expiry);
}

/** The error of `operation`, which must fail. */
async function failureOf(operation: Promise<unknown>): Promise<LockStoreError> {
  const failure = await operation.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(LockStoreError);
  return failure as LockStoreError;
}

describe('RedisPermitStore beside the permits of an earlier version', () => {
  it('refuses every permit operation on a resource in the earlier layout with an error naming it', async () => {
    const holder = newToken();
    await plantEarlierLayout('earlier', holder);
    const failures = [
      await failureOf(store.acquire(permit('earlier'))),
      await failureOf(store.release('earlier', holder)),
      await failureOf(store.extend('earlier', holder, 30_000)),
      await failureOf(store.inspect('earlier')),
      await failureOf(store.leaveLine('earlier', newToken())),
    ];
    for (const failure of failures) {
      expect(failure.message).toContain("holds its permits in an earlier version's layout");
      expect(failure.message).toContain('finish the deploy, or let those permits end');
      expect(failure.keyedDetail).toContain(permitKeys(prefix, 'earlier').state);
    }
    // nothing was granted or changed beside the earlier holder
    expect(await admin.hgetall(permitKeys(prefix, 'earlier').state)).toEqual({
      shape: 'limit:1',
      [`p:${holder}`]: 'p:0:',
    });
    expect(await admin.get(permitKeys(prefix, 'earlier').lock)).toBe('#');
  });

  it('refuses an operator’s revoke of a resource in the earlier layout before it ends anything', async () => {
    const holder = newToken();
    await plantEarlierLayout('revoked', holder);
    const listing = new RedisListing({
      client: toClientPort(client, 'client', false),
      keyPrefix: prefix,
      publish: 'PUBLISH',
    });
    const failure = await failureOf(listing.revoke('revoked'));
    expect(failure.message).toContain("holds its permits in an earlier version's layout");
    expect(await admin.get(permitKeys(prefix, 'revoked').lock)).toBe('#');
    expect(await admin.exists(permitKeys(prefix, 'revoked').fence)).toBe(0);
  });

  it('keeps its state where a process of the earlier layout fails loudly on its first read', async () => {
    const holder = permit('current');
    expect(await store.acquire(holder)).toEqual({ acquired: true });
    const names = permitKeys(prefix, 'current');
    // the first command of the earlier acquire, release and leave-line scripts, and the read of its inspect
    await expect(admin.hmget(names.state, 'shape', 'writer', `p:${holder.token}`)).rejects.toThrow(/WRONGTYPE/);
    await expect(admin.hget(names.state, 'shape')).rejects.toThrow(/WRONGTYPE/);
    // no sorted set of permits: the earlier extend finds no permit to extend, and none to count as free
    expect(await admin.exists(`${names.lock}:permits`, `${names.lock}:permit-line`)).toBe(0);
  });
});
