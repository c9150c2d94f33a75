import { Redis } from 'ioredis';
import { LockManager } from '../../lib/core/lock-manager.js';
import { RedisLockStore } from '../../lib/stores/redis/redis.store.js';
import type { ChildHandle } from './child-process.js';
import { testRedisUrl, uniquePrefix } from './stores.js';

/** What each test of several processes on the suite's Redis works in; made fresh and cleaned up per test. */
export interface ProcessRoom {
  /** The key prefix of this test. */
  readonly prefix: string;
  /** A client for looking inside Redis. */
  readonly admin: Redis;
  /** The child processes the test started: killed after it. */
  readonly children: ChildHandle[];
  /** A manager on a store of its own: another process as far as the key's line can tell. */
  manager(): LockManager;
}

/** Sets up a {@link ProcessRoom} before each test of the calling `describe`, and tears it down after. */
export function useProcessRoom(): ProcessRoom {
  let prefix = '';
  let admin: Redis | undefined;
  const managers: LockManager[] = [];
  const children: ChildHandle[] = [];

  beforeEach(() => {
    prefix = uniquePrefix();
    admin = new Redis(testRedisUrl());
  });

  afterEach(async () => {
    await Promise.all(children.splice(0).map((child) => child.kill()));
    await Promise.all(managers.splice(0).map((manager) => manager.close()));
    await admin?.quit();
  });

  return {
    get prefix() {
      return prefix;
    },
    get admin() {
      if (!admin) throw new Error('the process room is made before each test');
      return admin;
    },
    children,
    manager() {
      const store = new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix: prefix, ownsClient: true });
      const created = new LockManager({ store });
      managers.push(created);
      return created;
    },
  };
}
