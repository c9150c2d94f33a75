import { Redis } from 'ioredis';
import { startRedisServer, type RedisServerHandle } from './redis-server.js';

/** A redis-server of one test file's own: its handle and an admin client, set once the file's tests start. */
export interface OwnRedisServer {
  readonly server: RedisServerHandle;
  readonly admin: Redis;
  /** Undone after each test, the last added first, before the server is emptied. */
  readonly cleanups: Array<() => unknown>;
}

/**
 * Gives the calling test file a redis-server of its own (its command counts, ACL users and settings are its
 * alone): started before its tests, stopped after them; after each test, its `cleanups` run (last first), then
 * `reset` (settings a test changed), then `FLUSHALL`. Read `server` and `admin` inside tests and hooks.
 */
export function ownRedisServer(reset?: (admin: Redis) => Promise<unknown>): OwnRedisServer {
  const own = { cleanups: [] as Array<() => unknown> } as { server: RedisServerHandle; admin: Redis } & OwnRedisServer;
  beforeAll(async () => {
    own.server = await startRedisServer();
    own.admin = new Redis(own.server.url);
  });
  afterEach(async () => {
    for (const undo of own.cleanups.splice(0).reverse()) await undo();
    await reset?.(own.admin);
    await own.admin.flushall();
  });
  afterAll(async () => {
    await own.admin.quit();
    await own.server.stop();
  });
  return own;
}
