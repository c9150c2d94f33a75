import { tickTolerance, type TickSchedule } from './tick-schedule.js';

/**
 * The window of a `@Cron` on a date: its one run claims it from `tolerance` (1 s) before the date to that
 * long before the date plus this, so an instance whose clock is up to a second off finds the run claimed.
 */
const DATE_WINDOW = 60_000;

/**
 * The one tick of `@Cron(date)`, as windows of a minute from the date, so that the run every instance makes at
 * the date claims the same window, as a recurring schedule's runs claim their tick's.
 */
export class DateTicks implements TickSchedule {
  readonly tolerance = tickTolerance(DATE_WINDOW);

  /** @param date the date's time, in ms since the epoch */
  constructor(private readonly date: number) {}

  upcoming(): readonly [number, number] {
    const now = Date.now();
    const past = Math.max(0, Math.floor((now - this.date) / DATE_WINDOW) + 1);
    const next = this.date + past * DATE_WINDOW;
    return [next, next + DATE_WINDOW];
  }
}
