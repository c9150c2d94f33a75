/** The list each report run is recorded in, as `<tick>:<instance>`, so the demo can count runs per tick. */
export const REPORT_RUNS = 'report:runs';

/** The second a run was scheduled for: cron starts it on time, or late by less than its 250 ms threshold. */
export function currentTick(): number {
  return Math.round(Date.now() / 1000);
}
