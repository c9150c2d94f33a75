import { performance } from 'node:perf_hooks';

/**
 * Takes the next fence of `key` from an in-process store's counters, and records it: one above the counter and
 * never below the wall clock in microseconds, the rule of the Redis scripts (redis/scripts/grant.lua.ts). The
 * counters outlive leases, as in Redis: they must keep growing across holders. The clock floor gives fences of
 * the same shape as Redis's, and keeps them above those of an earlier run of the process.
 */
export function takeFence(fences: Map<string, number>, key: string): number {
  const fence = Math.max((fences.get(key) ?? 0) + 1, microsecondsSinceEpoch());
  fences.set(key, fence);
  return fence;
}

/** The wall clock in microseconds, read through the monotonic clock so that it never goes back in a process. */
function microsecondsSinceEpoch(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}
