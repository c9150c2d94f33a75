import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Sleeps until `performance.now()` has reached `deadline`: a timer counts whole milliseconds and may fire up
 * to one before the fractional time it was asked for, which a test of a lease's last millisecond cannot allow.
 */
export async function sleepUntil(deadline: number): Promise<void> {
  for (let left = deadline - performance.now(); left > 0; left = deadline - performance.now()) await sleep(left);
}
