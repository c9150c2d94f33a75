import { jest } from '@jest/globals';
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

  it('gives a call long after the date a window of its own', () => {
    jest.useFakeTimers({ now: date + 3_600_000 + 10 });
    expect(new DateTicks(date).upcoming()).toEqual([date + 3_660_000, date + 3_720_000]);
  });
});
