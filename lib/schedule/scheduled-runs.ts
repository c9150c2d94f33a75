import { CronTicks } from './cron-ticks.js';
import { DateTicks } from './date-ticks.js';
import { IntervalTicks } from './interval-ticks.js';
import type { MethodSchedule } from './method-schedule.js';
import { cronTimeOf, type SchedulerJobs } from './scheduler-jobs.js';
import type { TickSchedule } from './tick-schedule.js';

/** The runs of one scheduled `@WithLock` method: how `@nestjs/schedule` runs it, and the ticks its runs claim. */
export class ScheduledRuns {
  private ticks?: TickSchedule;

  /**
   * @param schedule what the method's schedule decorator recorded
   * @param jobs the application's scheduler, where a `@Cron` method's times are computed
   */
  constructor(
    readonly schedule: MethodSchedule,
    private readonly jobs?: SchedulerJobs,
  ) {}

  /**
   * The ticks a run claims (`@Cron` on a date: the date's one); `undefined` for `@Timeout` (each instance fires
   * it at its own time), and for a `@Cron` whose scheduler has no job yet (asked again on the next call: the
   * scheduler starts its jobs after the modules).
   */
  tickSchedule(): TickSchedule | undefined {
    this.ticks ??= this.made();
    return this.ticks;
  }

  private made(): TickSchedule | undefined {
    const { schedule, jobs } = this;
    if (schedule.kind === 'interval') return new IntervalTicks(schedule.period);
    if (schedule.kind !== 'cron') return undefined;
    // every instance fires at the date: a run quicker than their clocks' difference must not run twice
    if (schedule.cronTime instanceof Date && Number.isFinite(schedule.cronTime.getTime())) {
      const { name } = schedule;
      const live = name === undefined || !jobs ? undefined : () => jobs.getCronJobs().get(name)?.cronTime;
      return new DateTicks(schedule.cronTime.getTime(), live);
    }
    if (!jobs) return undefined;
    const time = cronTimeOf(jobs, schedule);
    return time && new CronTicks(time);
  }
}
