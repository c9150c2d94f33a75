/**
 * The ticks of a recurring schedule (`@Cron`, `@Interval`), as far as a run's claim on its tick needs them.
 * Time is cut into one window per tick, from `tolerance` ms before the tick to `tolerance` ms before the next:
 * a run claims the window it started in, so each window runs once however far apart the instances fire in it.
 */
export interface TickSchedule {
  /**
   * Slack before each tick, in ms: a claim on a tick ends this long before the next one, so that every
   * instance that fires for the next tick finds it free, and a run that starts this close to a tick counts
   * for that tick.
   */
  readonly tolerance: number;
  /** The next two ticks after the current time, in ms since the epoch, ascending. */
  upcoming(): readonly [number, number];
}

/**
 * The least slack: the trip of a claim's keep to the store on a busy machine, timer rounding, and the clock
 * differences NTP leaves between hosts.
 */
const LEAST_TOLERANCE = 20;
/** The most slack: more buys nothing, and an instance that fires up to a period less this late is still refused. */
const MOST_TOLERANCE = 1000;

/**
 * The slack of a schedule whose ticks are at least `gap` ms apart: 5 % of the gap (a longer period affords more
 * room for clock differences), within 20 ms and 1 s, and at most a quarter of the gap (very short intervals).
 */
export function tickTolerance(gap: number): number {
  return Math.min(MOST_TOLERANCE, gap / 4, Math.max(LEAST_TOLERANCE, gap / 20));
}

/**
 * Until when (ms since the epoch) a run that started at `startedAt` keeps its tick claimed, asked as it ends:
 * the end of the window it started in, or of the window it ends in when it ran past its own (a run longer than
 * its period takes the ticks that came while it ran, and those are skipped). At or before now: nothing to keep.
 */
export function claimEnd(schedule: TickSchedule, startedAt: number, now = Date.now()): number {
  const { tolerance } = schedule;
  // the ticks are more than 4 tolerances apart: one of the next two is past `from`
  const from = Math.max(startedAt + tolerance, now);
  const [first, second] = schedule.upcoming();
  return (first > from ? first : second) - tolerance;
}
