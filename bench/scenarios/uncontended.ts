import type { Session } from '../libraries.js';
import { now } from '../support/stats.js';

/** Scenario 1: acquire then release, one after the other, on one key nobody else wants. Latency per cycle, ms. */
export async function sequentialCycles(session: Session, key: string, durationMs: number): Promise<number[]> {
  const latencies: number[] = [];
  const end = now() + durationMs;
  while (now() < end) {
    const started = now();
    const held = await session.acquire(key);
    await held.release();
    latencies.push(now() - started);
  }
  return latencies;
}

/** Scenario 2: `loops` concurrent acquire/release loops, each on its own key. Cycles completed by all loops. */
export async function concurrentCycles(
  session: Session,
  keyPrefix: string,
  loops: number,
  durationMs: number,
): Promise<number> {
  const end = now() + durationMs;
  const counts = await Promise.all(
    Array.from({ length: loops }, async (_, loop) => {
      let cycles = 0;
      while (now() < end) {
        const held = await session.acquire(`${keyPrefix}${loop}`);
        await held.release();
        cycles++;
      }
      return cycles;
    }),
  );
  return counts.reduce((a, b) => a + b, 0);
}
