import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';

/** A redis-server put to sleep by {@link sleepServer}. */
export interface ServerSleep {
  /** Resolves when the server answers again. */
  readonly awake: Promise<void>;
}

/**
 * Pauses every client of the server (`CLIENT PAUSE ms ALL`, or `WRITE` for writes only) for `ms`, from a
 * connection of its own. Resolves once the pause is in force; the server lifts it by itself.
 */
export async function pauseServer(redisUrl: string, ms: number, mode: 'ALL' | 'WRITE' = 'ALL'): Promise<void> {
  const admin = await adminConnection(redisUrl);
  try {
    await admin.call('CLIENT', 'PAUSE', Math.round(ms), mode);
  } finally {
    // QUIT would itself wait out the pause.
    admin.disconnect();
  }
}

/**
 * Blocks the whole server for `seconds` (`DEBUG SLEEP`; fractions allowed), as a long stall would. Resolves
 * once the server is asleep, so whatever the test sends next waits; `awake` resolves when it answers again.
 * The server needs `--enable-debug-command local` (startRedisServer sets it).
 * @throws Error when the server refuses DEBUG.
 * @example
 * const sleep = await sleepServer(redis.url, 2);
 * await expect(lock.extend()).rejects.toThrow();
 * await sleep.awake;
 */
export async function sleepServer(redisUrl: string, seconds: number): Promise<ServerSleep> {
  const sleeper = await adminConnection(redisUrl);
  const probe = await adminConnection(redisUrl).catch((error: unknown) => {
    sleeper.disconnect();
    throw error;
  });
  const awake = sleeper
    .call('DEBUG', 'SLEEP', String(seconds))
    .then(() => undefined)
    .finally(() => sleeper.disconnect());
  try {
    // The two connections race to the server: a PING answered at once means the sleep has not begun yet.
    let outcome: 'answered' | 'silent' | 'woke' = 'answered';
    while (outcome === 'answered') {
      let timer: NodeJS.Timeout | undefined;
      outcome = await Promise.race([
        probe.ping().then(() => 'answered' as const),
        // A sleep shorter than the probe's patience is over before it could be seen.
        awake.then(() => 'woke' as const),
        new Promise<'silent'>((resolve) => (timer = setTimeout(resolve, PROBE_SILENCE_MS, 'silent'))),
      ]).finally(() => clearTimeout(timer));
    }
  } finally {
    probe.disconnect();
  }
  return { awake };
}

/** Blocks this process's event loop for `ms` with a busy loop, as a long synchronous task or GC pause would. */
export function blockEventLoop(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // Busy on purpose: timers, sockets and promises all wait.
  }
}

const PROBE_SILENCE_MS = 30;

async function adminConnection(redisUrl: string): Promise<Redis> {
  const client = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  // Failures reach the caller through the rejected promise; without a listener ioredis would also log them.
  client.on('error', () => undefined);
  await client.connect();
  return client;
}
