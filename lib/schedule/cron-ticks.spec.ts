import { jest } from '@jest/globals';
import { CronJob, CronTime } from 'cron';
import { Cron } from '@nestjs/schedule';
import { scheduleOf } from './method-schedule.js';
import { cronTimeOf, type SchedulerJobs } from './scheduler-jobs.js';
import { CronTicks } from './cron-ticks.js';
import { claimEnd } from './tick-schedule.js';

/** A scheduler with the given cron jobs (the `cron` package is the scheduler's own). */
function scheduler(jobs: Record<string, string>): SchedulerJobs & { jobs: Map<string, CronJob> } {
  const map = new Map(
    Object.entries(jobs).map(([name, time]) => [name, CronJob.from({ cronTime: time, onTick: () => undefined })]),
  );
  return { jobs: map, getCronJobs: () => map };
}

/** The ticks of a method decorated `@Cron(cronTime, options)`, as a lock claims them. */
function ticksOf(jobs: SchedulerJobs, ...cron: Parameters<typeof Cron>): CronTicks {
  class Job {
    @Cron(...cron)
    run(): void {}
  }
  const schedule = scheduleOf(Job.prototype.run);
  if (schedule?.kind !== 'cron') throw new Error('not a cron method');
  const time = cronTimeOf(jobs, schedule);
  if (!time) throw new Error('no CronTime');
  return new CronTicks(time);
}

const at = (iso: string): number => Date.parse(iso);

describe('CronTicks', () => {
  const jobs = scheduler({ other: '0 0 * * * *' });

  afterEach(() => {
    jest.useRealTimers();
  });

  it('ticks every second for a 6-field expression with a seconds field, with a 50 ms tolerance', () => {
    jest.useFakeTimers({ now: at('2026-01-10T12:00:00.300Z') });
    const ticks = ticksOf(jobs, '* * * * * *');
    expect(ticks.upcoming()).toEqual([at('2026-01-10T12:00:01Z'), at('2026-01-10T12:00:02Z')]);
    expect(ticks.tolerance).toBe(50);
  });

  it('ticks on the minutes of a 5-field expression, with the 1 s tolerance of a long period', () => {
    jest.useFakeTimers({ now: at('2026-01-10T12:03:10Z') });
    const ticks = ticksOf(jobs, '*/5 * * * *', { utcOffset: 0 });
    expect(ticks.upcoming()).toEqual([at('2026-01-10T12:05:00Z'), at('2026-01-10T12:10:00Z')]);
    expect(ticks.tolerance).toBe(1000);
  });

  it('ticks in the time zone of the job', () => {
    // 09:30 in Tokyo: the next 09:00 there is tomorrow's
    jest.useFakeTimers({ now: at('2026-01-10T00:30:00Z') });
    const ticks = ticksOf(jobs, '0 0 9 * * *', { timeZone: 'Asia/Tokyo' });
    expect(ticks.upcoming()).toEqual([at('2026-01-11T00:00:00Z'), at('2026-01-12T00:00:00Z')]);
  });

  it('ticks at the UTC offset of the job', () => {
    jest.useFakeTimers({ now: at('2026-01-10T02:00:00Z') });
    const ticks = ticksOf(jobs, '0 30 8 * * *', { utcOffset: 330 });
    expect(ticks.upcoming()).toEqual([at('2026-01-10T03:00:00Z'), at('2026-01-11T03:00:00Z')]);
  });

  it('takes its tolerance from the shortest gap of an uneven seconds field', () => {
    jest.useFakeTimers({ now: at('2026-01-10T12:00:00.004Z') });
    const ticks = ticksOf(jobs, '0,1 * * * * *', { utcOffset: 0 });
    expect(ticks.tolerance).toBe(50);
    // a run at :00 claims its tick until just before :01, not past it
    expect(claimEnd(ticks, Date.now())).toBe(at('2026-01-10T12:00:00.950Z'));
  });

  it("follows a named job's new time, set after the decorator's", () => {
    jest.useFakeTimers({ now: at('2026-01-10T12:00:00.300Z') });
    const named = scheduler({ report: '0 0 * * * *' });
    const ticks = ticksOf(named, '0 0 * * * *', { name: 'report' });
    expect(ticks.upcoming()[0]).toBe(at('2026-01-10T13:00:00Z'));
    named.jobs.get('report')!.setTime(new CronTime('* * * * * *'));
    expect(ticks.upcoming()[0]).toBe(at('2026-01-10T12:00:01Z'));
    expect(ticks.tolerance).toBe(50);
  });
});

describe('cronTimeOf', () => {
  it('finds no times without a cron job in the scheduler to compute them, nor for a job on a date', () => {
    class Job {
      @Cron('* * * * * *')
      run(): void {}
      @Cron(new Date(Date.now() + 60_000))
      once(): void {}
    }
    const every = scheduleOf(Job.prototype.run);
    const once = scheduleOf(Job.prototype.once);
    if (every?.kind !== 'cron' || once?.kind !== 'cron') throw new Error('not cron methods');
    expect(cronTimeOf(scheduler({}), every)).toBeUndefined();
    expect(cronTimeOf(scheduler({ other: '* * * * * *' }), once)).toBeUndefined();
  });
});
