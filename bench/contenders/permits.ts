import { Redis } from 'ioredis';
import { Semaphore, TimeoutError } from 'redis-semaphore';
import { LockManager, LockNotAcquiredError, RedisLockStore } from '../../lib/index.js';
import type { PermitMode } from '../../lib/store.js';
import { TTL, heldByCallback, type Held } from './contender.js';
import { openNestLocks } from './nest-application.js';
import { SERVICE } from './nestjs-lock-service.js';

/** What a permit request asks for: one of `limit` places of a semaphore, or a read or write permit. */
export type PermitAsk = { readonly limit: number } | { readonly mode: PermitMode };

/** What one worker (or one process, for a shared session) opens of a contender that grants permits. */
export interface PermitSession {
  /** Takes a permit of `key`, waiting while it is full; library-level give-ups are retried and counted. */
  acquire(key: string, ask: PermitAsk): Promise<Held>;
  /** Library-level failures retried so far (a wait that ran out). */
  retries: number;
  close(): Promise<void>;
}

/** A contender of the permit scenarios (11 and 12): a semaphore library, or a variant of ours. */
export interface PermitLibrary {
  readonly name: string;
  /** In-process workers share one session (one LockManager per process, as a Nest app has one). */
  readonly shared: boolean;
  readonly kind: 'ours' | 'peer';
  /** Whether it has a readers-writer lock (scenario 12). */
  readonly readersWriter: boolean;
  /** Shown under the tables: what waiting means for this contender, and how it is driven. */
  readonly waiting: string;
  open(url: string): Promise<PermitSession>;
}

/** Library-level give-ups (each a whole wait long) after which a worker stops trying. */
const MAX_RETRIES = 20;

/** A session whose `acquire` runs `take` until it succeeds, counting the give-ups that `givesUp` recognises. */
function retryingPermits(
  givesUp: (error: unknown) => boolean,
  take: (key: string, ask: PermitAsk) => Promise<Held>,
  close: () => Promise<void>,
): PermitSession {
  const session: PermitSession = {
    retries: 0,
    async acquire(key, ask) {
      for (;;) {
        try {
          return await take(key, ask);
        } catch (error) {
          if (!givesUp(error) || ++session.retries > MAX_RETRIES) throw error;
        }
      }
    },
    close,
  };
  return session;
}

const OURS_WAITING =
  'using(key, fn, { limit } or { mode }), wait 10 s, ttl 30 s: a refused caller keeps a place in the key’s ' +
  'line in Redis; a release reserves the freed permit for the first place that fits and tells its process ' +
  '(release notice), which then asks again';

function nestjsLockPermits(name: string, shared: boolean): PermitLibrary {
  return {
    name,
    shared,
    kind: 'ours',
    readersWriter: true,
    waiting: OURS_WAITING,
    async open(url) {
      const store = new RedisLockStore({ client: new Redis(url), ownsClient: true });
      const manager = new LockManager({ store, ttl: TTL, wait: 10_000 });
      await manager.verify();
      return retryingPermits(
        (error) => error instanceof LockNotAcquiredError,
        (key, ask) => heldByCallback((inside) => manager.using(key, inside, ask)),
        () => manager.close(),
      );
    },
  };
}

/**
 * Ours as a Nest user calls it: the `LockService` of a Nest application context, `acquire(key, { ttl, wait,
 * autoRenew: false, limit | mode })` with the options written at the call, then `release()`.
 */
const nestjsLockServicePermits: PermitLibrary = {
  name: SERVICE,
  shared: true,
  kind: 'ours',
  readersWriter: true,
  waiting: `${OURS_WAITING}; through LockService.acquire() with options per call, autoRenew off`,
  async open(url) {
    const { locks, close } = await openNestLocks(url);
    return retryingPermits(
      (error) => error instanceof LockNotAcquiredError,
      async (key, ask) => {
        const lock = await locks.acquire(key, { ttl: TTL, wait: 10_000, autoRenew: false, ...ask });
        return { release: async () => void (await lock.release()) };
      },
      close,
    );
  },
};

/** redis-semaphore's Semaphore at its defaults; no readers-writer lock in it. */
const redisSemaphorePermits: PermitLibrary = {
  name: 'redis-semaphore',
  shared: false,
  kind: 'peer',
  readersWriter: false,
  waiting:
    'Semaphore(client, key, limit) at its defaults, one client per worker: acquireTimeout 10 s, retryInterval ' +
    '10 ms (a refused acquire polls its Lua script every 10 ms), lockTimeout 10 s, refresh every 8 s',
  async open(url) {
    const client = new Redis(url);
    return retryingPermits(
      (error) => error instanceof TimeoutError,
      async (key, ask) => {
        if (!('limit' in ask)) throw new Error('redis-semaphore has no readers-writer lock');
        const semaphore = new Semaphore(client, key, ask.limit);
        await semaphore.acquire();
        return { release: () => semaphore.release() };
      },
      async () => void (await client.quit()),
    );
  },
};

/** Every contender of the permit scenarios, in the order of their tables. */
export const PERMIT_LIBRARIES: readonly PermitLibrary[] = [
  nestjsLockPermits('nestjs-lock', true),
  nestjsLockServicePermits,
  nestjsLockPermits('nestjs-lock/per-worker', false),
  redisSemaphorePermits,
];
