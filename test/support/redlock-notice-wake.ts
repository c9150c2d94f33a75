import { performance } from 'node:perf_hooks';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { LockModule, LockService } from '../../lib/index.js';
import { untilListening } from './channel-listeners.js';

/** A Nest application with only `LockModule.forRoot(options)`, its logger off. */
async function bootLockApp(options: Parameters<typeof LockModule.forRoot>[0]) {
  const ref = await Test.createTestingModule({ imports: [LockModule.forRoot(options)] }).compile();
  const app = ref.createNestApplication({ logger: false });
  await app.init();
  return app;
}

/**
 * Proves that a Redlock waiter on `waiterNodes` (clients of the library under test, on the servers of `urls`)
 * is woken by the release notice: its own next look is 10 s away, so only the notice can grant it within 500 ms
 * of the release by a holder on ioredis nodes of the same servers.
 */
export async function expectRedlockWaiterWokenByNotice(
  waiterNodes: readonly unknown[],
  urls: readonly string[],
  keyPrefix: string,
): Promise<void> {
  // a generous per-node timeout: what is measured is the wake-up, and a loaded machine's round can take 200 ms
  const waiterApp = await bootLockApp({ redlock: { nodes: [...waiterNodes] as never[], timeout: 1000 }, keyPrefix });
  const holderApp = await bootLockApp({ redlock: { nodes: [...urls], timeout: 1000 }, keyPrefix });
  try {
    const held = await holderApp.get(LockService).acquire('n', { ttl: 30_000 });
    const retry = { minDelay: 10_000, maxDelay: 10_000 };
    const waiting = waiterApp.get(LockService).acquire('n', { ttl: 30_000, wait: 20_000, retry });
    await untilListening(
      urls.map((url) => new Redis(url)),
      keyPrefix,
    );
    const releasedAt = performance.now();
    await held.release();
    const lock = await waiting;
    expect(performance.now() - releasedAt).toBeLessThan(500);
    await lock.release();
  } finally {
    await Promise.all([waiterApp.close(), holderApp.close()]);
  }
}
