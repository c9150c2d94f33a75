import { tickTolerance, type TickSchedule } from './tick-schedule.js';

/** What the `cron` library's `CronTime` offers for a cron expression (its versions 2 to 4 alike). */
export interface CronTimeLike {
  /** The next `count` times the expression fires after now, as Luxon dates. */
  sendAt(count: number): ReadonlyArray<{ toMillis(): number }>;
}

/** How many upcoming ticks the shortest gap between two is taken from (a seconds field may be uneven). */
const SAMPLED_TICKS = 8;

/**
 * The ticks of `@Cron(expression)`, computed by the scheduler's own `CronTime` (its time zone or UTC offset
 * included), so they are the times the scheduler fires at. Read through `current` on every use: a named job's
 * `setTime` is followed.
 */
export class CronTicks implements TickSchedule {
  private time?: CronTimeLike;
  private slack = 0;

  constructor(private readonly current: () => CronTimeLike) {}

  get tolerance(): number {
    this.follow();
    return this.slack;
  }

  upcoming(): readonly [number, number] {
    const [first, second] = this.follow().sendAt(2);
    return [first.toMillis(), second.toMillis()];
  }

  /** The current `CronTime`, and its slack taken from the shortest gap among its next ticks when it is new. */
  private follow(): CronTimeLike {
    const time = this.current();
    if (time !== this.time) {
      const ticks = time.sendAt(SAMPLED_TICKS + 1).map((tick) => tick.toMillis());
      let gap = Infinity;
      for (let i = 1; i < ticks.length; i++) gap = Math.min(gap, ticks[i] - ticks[i - 1]);
      this.time = time;
      this.slack = tickTolerance(gap);
    }
    return time;
  }
}
