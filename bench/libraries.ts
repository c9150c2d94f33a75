import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import Redlock, { ExecutionError } from 'redlock';
import { Mutex, TimeoutError } from 'redis-semaphore';
import { LockManager, LockNotAcquiredError, RedisLockStore } from '../lib/index.js';

/** A lease a worker holds. */
export interface Held {
  release(): Promise<void>;
}

/** What one worker (or one process, for a shared session) opens of a library: its clients and objects. */
export interface Session {
  /** Takes `key`, waiting while someone else holds it; library-level give-ups are retried and counted. */
  acquire(key: string): Promise<Held>;
  /** Library-level failures retried so far (redlock's retry budget, a timeout). */
  retries: number;
  close(): Promise<void>;
}

/** A contender of the bench. */
export interface Library {
  readonly name: string;
  /** In-process workers share one session (one LockManager per process, as a Nest app has one). */
  readonly shared: boolean;
  /** Shown under the table: what waiting means for this contender. */
  readonly waiting: string;
  open(url: string): Promise<Session>;
}

/** Lease length for every contender that takes one as an argument (redis-semaphore keeps its own default). */
export const TTL = 30_000;
/** How long the floor sleeps between two SET NX attempts while the key is held. */
export const FLOOR_POLL_MS = 1;
/** Library-level give-ups (each several seconds long) after which a worker stops trying. */
const MAX_RETRIES = 20;

async function retrying<T>(
  session: { retries: number },
  expected: (error: unknown) => boolean,
  take: () => Promise<T>,
) {
  for (;;) {
    try {
      return await take();
    } catch (error) {
      if (!expected(error) || ++session.retries > MAX_RETRIES) throw error;
    }
  }
}

const FLOOR_RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** The least a correct lock does: `SET NX PX` to take, a token-checked delete by EVALSHA to release. */
export const floor: Library = {
  name: 'floor',
  shared: false,
  waiting: `polls SET NX every ${FLOOR_POLL_MS} ms (setTimeout) while held`,
  async open(url) {
    const client = new Redis(url);
    const sha = (await client.script('LOAD', FLOOR_RELEASE)) as string;
    const session: Session = {
      retries: 0,
      // the same retry wrapper as every other contender, so the bench's own cost is alike for all
      acquire: (key: string) =>
        retrying(
          session,
          () => false,
          () => takeFloor(key),
        ),
      async close() {
        await client.quit();
      },
    };
    async function takeFloor(key: string): Promise<Held> {
      // Node's cached-entropy UUID: the cheapest crypto-random token there is, so the floor stays a floor
      const token = randomUUID();
      while ((await client.set(key, token, 'PX', TTL, 'NX')) !== 'OK') await sleep(FLOOR_POLL_MS);
      return {
        async release() {
          await client.evalsha(sha, 1, key, token);
        },
      };
    }
    return session;
  },
};

function nestjsLock(name: string, shared: boolean, scoped = false): Library {
  return {
    name,
    shared,
    waiting:
      'local FIFO per key (only the head of a process talks to Redis, a local release wakes it at once); across ' +
      'clients a release notice by pub/sub wakes every waiting client, and after a contended release the key is ' +
      'reserved for 20 ms against the releasing client (hand-off window)',
    async open(url) {
      const store = new RedisLockStore({ client: new Redis(url), ownsClient: true });
      await store.verify();
      const manager = new LockManager({ store, ttl: TTL, wait: 10_000 });
      const session = {
        retries: 0,
        acquire: (key: string) =>
          retrying(
            session,
            (error) => error instanceof LockNotAcquiredError,
            async () => {
              if (scoped) return heldByUsing(manager, key);
              const lock = await manager.acquire(key);
              return { release: async () => void (await lock.release()) };
            },
          ),
        close: () => manager.close(),
      };
      return session;
    },
  };
}

/** Holds `key` inside `manager.using()` until the returned lease is released. */
function heldByUsing(manager: LockManager, key: string): Promise<Held> {
  return new Promise((resolve, reject) => {
    const done = manager.using(
      key,
      () =>
        new Promise<void>((finish) =>
          resolve({
            release: async () => {
              finish();
              await done;
            },
          }),
        ),
    );
    done.catch(reject);
  });
}

/** This project with one LockManager for every worker of a process, as one Nest app has one LockService. */
export const nestjsLockShared = nestjsLock('nestjs-lock', true);
/** This project through `using()`: async-context scope and auto-renewal on, as `@WithLock` runs. */
export const nestjsLockUsing = nestjsLock('nestjs-lock using()', true, true);
/** This project with one LockManager (and connection) per worker: how independent instances meet. */
export const nestjsLockPerWorker = nestjsLock('nestjs-lock/per-worker', false);

/** node-redlock with its defaults (10 retries, 200 ± 100 ms apart) on a single node. */
export const redlock: Library = {
  name: 'redlock',
  shared: false,
  waiting: 'defaults: retryCount 10, retryDelay 200 ms, retryJitter 100 ms; then ExecutionError (retried by the bench)',
  async open(url) {
    const client = new Redis(url);
    const instance = new Redlock([client]);
    // redlock emits every refused attempt as 'error'; without a listener the process would crash
    instance.on('error', () => undefined);
    const session = {
      retries: 0,
      acquire: (key: string) =>
        retrying(
          session,
          (error) => error instanceof ExecutionError,
          async () => {
            const lock = await instance.acquire([key], TTL);
            return { release: async () => void (await lock.release()) };
          },
        ),
      close: () => instance.quit(),
    };
    return session;
  },
};

/** redis-semaphore's Mutex with its defaults (lockTimeout 10 s, polls SET NX every 10 ms, refresh at 8 s). */
export const redisSemaphore: Library = {
  name: 'redis-semaphore',
  shared: false,
  waiting: 'defaults: polls SET NX every 10 ms (retryInterval), acquireTimeout 10 s',
  async open(url) {
    const client = new Redis(url);
    const session = {
      retries: 0,
      acquire: (key: string) =>
        retrying(
          session,
          (error) => error instanceof TimeoutError,
          async () => {
            const mutex = new Mutex(client, key);
            await mutex.acquire();
            return { release: () => mutex.release() };
          },
        ),
      close: async () => void (await client.quit()),
    };
    return session;
  },
};

export const LIBRARIES: readonly Library[] = [floor, nestjsLockShared, nestjsLockPerWorker, redlock, redisSemaphore];

export function libraryNamed(name: string): Library {
  const library = LIBRARIES.find((candidate) => candidate.name === name);
  if (!library) throw new Error(`no library "${name}" in the bench`);
  return library;
}
