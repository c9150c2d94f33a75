import type { CronTimeLike } from './cron-ticks.js';
import type { MethodSchedule } from './method-schedule.js';

/** What the claims read of `@nestjs/schedule`'s `SchedulerRegistry`: its cron jobs, each with its `cronTime`. */
export interface SchedulerJobs {
  getCronJobs(): Map<string, { readonly cronTime: unknown }>;
}

type CronTimeClass = new (source: string, timeZone?: string | null, utcOffset?: number | null) => CronTimeLike;

/**
 * The `CronTime` of a `@Cron` method, made by the `cron` library the scheduler itself runs on (taken from its
 * jobs, so no copy of our own can disagree on a time zone or a version): the live job's when the method names
 * it (its `setTime` is followed), else one built from the decorator's options as the scheduler builds its own.
 * `undefined` when the scheduler has no cron job to take it from (cron jobs turned off), or for a `@Cron` on a date.
 */
export function cronTimeOf(
  jobs: SchedulerJobs,
  schedule: Extract<MethodSchedule, { kind: 'cron' }>,
): (() => CronTimeLike) | undefined {
  const { cronTime, name, timeZone, utcOffset } = schedule;
  if (typeof cronTime !== 'string') return undefined;
  const all = jobs.getCronJobs();
  const sample = all.values().next().value?.cronTime;
  if (!isCronTime(sample)) return undefined;
  const Built = sample.constructor as CronTimeClass;
  const built =
    timeZone !== undefined
      ? new Built(cronTime, timeZone)
      : utcOffset !== undefined
        ? new Built(cronTime, null, utcOffset)
        : new Built(cronTime);
  return () => {
    const live = name === undefined ? undefined : jobs.getCronJobs().get(name)?.cronTime;
    // a job set to fire once, at a date, has no ticks
    return isCronTime(live) && !(live as { realDate?: boolean }).realDate ? live : built;
  };
}

/** Whether `value` is a `CronTime` of the `cron` library (a job's `cronTime`). */
export function isCronTime(value: unknown): value is CronTimeLike {
  return typeof value === 'object' && value !== null && typeof (value as CronTimeLike).sendAt === 'function';
}
