import { Redis } from 'ioredis';
import { Redis as Valkey } from 'iovalkey';
import { createClient } from 'redis';
import { LockManager, LockNotAcquiredError, RedisLockStore, type RedisLockStoreOptions } from '../../lib/index.js';
import { ALL_ROLES, TTL, heldByCallback, retryingSession, type Library, type Role } from './contender.js';

/** How a variant of this project is driven. */
interface Variant {
  readonly name: string;
  /** One LockManager for every worker of a process (as one Nest app has one LockService). */
  readonly shared: boolean;
  readonly roles: readonly Role[];
  /** Holds each lease inside `using()` (async-context scope, auto-renewal) instead of acquire/release. */
  readonly scoped?: boolean;
  /** Asks for a fence with every grant. */
  readonly fencing?: boolean;
  /** The client library the store runs on. @default 'ioredis' */
  readonly client?: 'ioredis' | 'node-redis' | 'iovalkey' | 'glide';
}

/** A client of `variant`'s library on `url`, for the store to own (node-redis' connected by the store). */
async function clientOf(variant: Variant, url: string): Promise<RedisLockStoreOptions['client']> {
  switch (variant.client ?? 'ioredis') {
    case 'node-redis':
      return createClient({ url }).on('error', () => undefined);
    case 'iovalkey':
      // iovalkey's class is ioredis' under another name: a port as it is
      return new Valkey(url) as unknown as Redis;
    case 'glide': {
      // loaded only here: GLIDE's native core would otherwise start in every bench process
      const { GlideClient } = await import('@valkey/valkey-glide');
      const { hostname, port } = new URL(url);
      // GLIDE's default 250 ms request timeout would fail a worker of a loaded machine; the others have none
      return GlideClient.createClient({ addresses: [{ host: hostname, port: Number(port) }], requestTimeout: 5000 });
    }
    default:
      return new Redis(url);
  }
}

const WAITING =
  'local FIFO per key (only the head of a process talks to Redis, a local release wakes it at once); across ' +
  'clients a line of waiting processes in Redis: the release grants the key to the request of the first in ' +
  'line, whose notice (pub/sub, its own channel) tells it so: it starts without another request';

function nestjsLock(variant: Variant): Library {
  return {
    name: variant.name,
    shared: variant.shared,
    roles: variant.roles,
    kind: 'ours',
    waiting: WAITING,
    async open(url) {
      const store = new RedisLockStore({ client: await clientOf(variant, url), ownsClient: true });
      const manager = new LockManager({ store, ttl: TTL, wait: 10_000, fencing: variant.fencing ?? false });
      await manager.verify();
      return retryingSession(
        (error) => error instanceof LockNotAcquiredError,
        async (key) => {
          if (variant.scoped) return heldByCallback((inside) => manager.using(key, inside));
          const lock = await manager.acquire(key);
          return { release: async () => void (await lock.release()) };
        },
        () => manager.close(),
      );
    },
  };
}

/** This project with one LockManager for every worker of a process, as one Nest app has one LockService. */
export const nestjsLockShared = nestjsLock({ name: 'nestjs-lock', shared: true, roles: ALL_ROLES });
/** This project through `using()`: async-context scope and auto-renewal on, as `@WithLock` runs. */
export const nestjsLockUsing = nestjsLock({
  name: 'nestjs-lock using()',
  shared: true,
  roles: ['uncontended'],
  scoped: true,
});
/** This project with fencing on: every grant also takes the next fence. */
export const nestjsLockFenced = nestjsLock({
  name: 'nestjs-lock fenced',
  shared: true,
  roles: ['uncontended'],
  fencing: true,
});
/** This project with one LockManager (and connection) per worker: how independent instances meet. */
export const nestjsLockPerWorker = nestjsLock({ name: 'nestjs-lock/per-worker', shared: false, roles: ['in-process'] });
/** This project on a node-redis client: what the client costs, uncontended and across processes. */
export const nestjsLockNodeRedis = nestjsLock({
  name: 'nestjs-lock (node-redis)',
  shared: true,
  roles: ['uncontended', 'processes'],
  client: 'node-redis',
});
/** This project on an iovalkey client (ioredis' Valkey fork), as above. */
export const nestjsLockIovalkey = nestjsLock({
  name: 'nestjs-lock (iovalkey)',
  shared: true,
  roles: ['uncontended', 'processes'],
  client: 'iovalkey',
});
/** This project on a Valkey GLIDE `GlideClient` (its Rust core, RESP3), as above. */
export const nestjsLockGlide = nestjsLock({
  name: 'nestjs-lock (GLIDE)',
  shared: true,
  roles: ['uncontended', 'processes'],
  client: 'glide',
});
