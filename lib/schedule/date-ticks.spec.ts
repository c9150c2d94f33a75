import { jest } from '@jest/globals';
import { CronTime } from 'cron';
import { DateTicks } from './date-ticks.js';
import { claimEnd } from './tick-schedule.js';

describe('DateTicks', () => {
  const date = Date.UTC(2026, 11, 24, 18, 0, 0);

  afterEach(() => {
    jest.useRealTimers();
  });

  it('claims the same window for the runs of every instance within a second of the date', () => {
    const ticks = new DateTicks(date);
    expect(ticks.tolerance).toBe(1000);
    // a clock 0.5 s fast, one on time, one 0.9 s slow, and a run that took 200 ms: the claim ends 59 s after the date
    for (const startedAt of [date - 500, date, date + 900]) {
      jest.useFakeTimers({ now: startedAt + 200 });
      expect(claimEnd(ticks, startedAt)).toBe(date + 59_000);
    }
  });

  it('gives a call long before or after the date a minute of its own, not a claim until the date', () => {
    jest.useFakeTimers({ now: date + 3_600_000 + 10 });
    expect(new DateTicks(date).upcoming()).toEqual([date + 3_660_000, date + 3_720_000]);
    jest.useFakeTimers({ now: date - 3_600_000 + 10 });
    expect(claimEnd(new DateTicks(date), Date.now())).toBe(date - 3_540_000 - 1000);
  });

  it('follows a named job that setTime moved to another date, or to a recurring schedule', () => {
    jest.useFakeTimers({ now: date - 10_000 });
    let live: CronTime = new CronTime(new Date(date + 30_000));
    const ticks = new DateTicks(date, () => live);
    expect(ticks.upcoming()[0]).toBe(date + 30_000);
    jest.useFakeTimers({ now: date + 30_000 });
    expect(claimEnd(ticks, date + 30_000)).toBe(date + 30_000 + 59_000);
    live = new CronTime('*/10 * * * * *');
    expect(ticks.tolerance).toBe(500);
    expect(claimEnd(ticks, date + 30_000)).toBe(date + 40_000 - 500);
  });
});
