import { CronTicks } from './cron-ticks.js';
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
   * The ticks a run claims; `undefined` for one run (`@Timeout`, `@Cron` on a date), and for a `@Cron` whose
   * scheduler has no job yet (asked again on the next call: the scheduler starts its jobs after the modules).
   */
  tickSchedule(): TickSchedule | undefined {
    this.ticks ??= this.made();
    return this.ticks;
  }

  private made(): TickSchedule | undefined {
    const { schedule, jobs } = this;
    if (schedule.kind === 'interval') return new IntervalTicks(schedule.period);
    if (schedule.kind !== 'cron' || !jobs) return undefined;
    const time = cronTimeOf(jobs, schedule);
    return time && new CronTicks(time);
  }
}
