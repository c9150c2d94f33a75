import { CronTicks, type CronTimeLike } from './cron-ticks.js';
import { isCronTime } from './scheduler-jobs.js';
import { tickTolerance, type TickSchedule } from './tick-schedule.js';

/**
 * The windows of a `@Cron` on a date: a minute long, one of them from `tolerance` (1 s) before the date, so an
 * instance whose clock is up to a second off finds the run at the date claimed.
 */
const DATE_WINDOW = 60_000;

/**
 * The one tick of `@Cron(date)`, as a grid of windows of a minute on both sides of the date: the run every
 * instance makes at the date claims the same window, as a recurring schedule's runs claim their tick's, and a
 * call at another time claims no more than its own minute. A named job moved with the scheduler's `setTime`
 * is followed: to another date, or to a recurring schedule (then its ticks are that schedule's).
 */
export class DateTicks implements TickSchedule {
  private moved?: { readonly time: CronTimeLike; readonly ticks: CronTicks };

  /**
   * @param date the decorator's date, in ms since the epoch
   * @param live the job's `cronTime` as the scheduler now has it (a named job), if it can be looked up
   */
  constructor(
    private readonly date: number,
    private readonly live?: () => unknown,
  ) {}

  get tolerance(): number {
    return this.recurring()?.tolerance ?? tickTolerance(DATE_WINDOW);
  }

  upcoming(): readonly [number, number] {
    const recurring = this.recurring();
    if (recurring) return recurring.upcoming();
    const date = this.currentDate();
    const next = date + (Math.floor((Date.now() - date) / DATE_WINDOW) + 1) * DATE_WINDOW;
    return [next, next + DATE_WINDOW];
  }

  /** The ticks of the recurring schedule the job was moved to, if it was. */
  private recurring(): CronTicks | undefined {
    const time = this.live?.();
    if (!isCronTime(time) || isDate(time)) return undefined;
    if (this.moved?.time !== time) this.moved = { time, ticks: new CronTicks(() => time) };
    return this.moved.ticks;
  }

  /** The date the job now fires at: the decorator's, or the one it was moved to. */
  private currentDate(): number {
    const time = this.live?.();
    // its `source` (a Luxon date); `sendAt` throws once the date has passed
    const source = isCronTime(time) && isDate(time) ? (time as { source?: unknown }).source : undefined;
    const moved = (source as { toMillis?: () => unknown } | undefined)?.toMillis?.();
    return typeof moved === 'number' && Number.isFinite(moved) ? moved : this.date;
  }
}

/** Whether the `cron` library's time fires once, at a date. */
function isDate(time: CronTimeLike): boolean {
  return (time as { realDate?: unknown }).realDate === true;
}
