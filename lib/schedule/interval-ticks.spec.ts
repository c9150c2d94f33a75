import { jest } from '@jest/globals';
import { IntervalTicks } from './interval-ticks.js';

describe('IntervalTicks', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('ticks at the whole seconds of the wall clock for @Interval(1000), with a 50 ms tolerance', () => {
    jest.useFakeTimers({ now: Date.UTC(2026, 0, 10, 12, 0, 0, 300) });
    const ticks = new IntervalTicks(1000);
    expect(ticks.upcoming()).toEqual([Date.UTC(2026, 0, 10, 12, 0, 1), Date.UTC(2026, 0, 10, 12, 0, 2)]);
    expect(ticks.tolerance).toBe(50);
  });

  it('ticks at the multiples of its period since the epoch, whenever the instance started', () => {
    jest.useFakeTimers({ now: 1_000_000_000_100 });
    expect(new IntervalTicks(1500).upcoming()).toEqual([1_000_000_000_500, 1_000_000_002_000]);
    expect(new IntervalTicks(60_000).tolerance).toBe(1000);
  });

  it('gives the next tick after a time that is on a tick', () => {
    jest.useFakeTimers({ now: 1_000_000_002_000 });
    expect(new IntervalTicks(1000).upcoming()).toEqual([1_000_000_003_000, 1_000_000_004_000]);
  });
});
