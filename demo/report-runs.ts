import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { REPORT_RUNS } from '../sample/report/report-runs.js';

/** The instances that ran the report in one tick. */
export interface TickRuns {
  /** The tick, in epoch seconds. */
  readonly tick: number;
  readonly instances: string[];
}

/**
 * Watches the report runs the instances record (as `<tick>:<instance>` in the list {@link REPORT_RUNS}) for
 * `ticks` whole seconds from `firstTick`, and resolves with the runs of each. A tick is complete once a
 * later one has a run: cron drops a run that would start over 250 ms late, so none comes after that.
 */
export async function watchReportRuns(
  redis: Redis,
  firstTick: number,
  ticks: number,
  onTick: (seen: number) => void,
): Promise<TickRuns[]> {
  const end = firstTick + ticks;
  // a tick with no run at all would never be followed: stop waiting 2 s after the window's end
  const deadline = (end + 2) * 1000;
  let runs: Array<[number, string]> = [];
  for (;;) {
    runs = (await redis.lrange(REPORT_RUNS, 0, -1)).map((entry) => {
      const separator = entry.indexOf(':');
      return [Number(entry.slice(0, separator)), entry.slice(separator + 1)];
    });
    const latest = Math.max(0, ...runs.map(([tick]) => tick));
    onTick(Math.min(ticks, Math.max(0, latest - firstTick)));
    if (latest >= end || Date.now() > deadline) break;
    await sleep(100);
  }
  return Array.from({ length: ticks }, (_, index) => ({
    tick: firstTick + index,
    instances: runs.filter(([tick]) => tick === firstTick + index).map(([, instance]) => instance),
  }));
}
