import { claimEnd, tickTolerance, type TickSchedule } from './tick-schedule.js';

/** Ticks every second from `first` on, with the tolerance of a one-second schedule (50 ms), seen at `now`. */
function everySecondAt(now: number): TickSchedule {
  const next = (Math.floor(now / 1000) + 1) * 1000;
  return { tolerance: 50, upcoming: () => [next, next + 1000] };
}

const T = Date.UTC(2026, 0, 10, 12, 0, 0);

describe('tickTolerance', () => {
  it('is 5 % of the gap between ticks, within 20 ms and 1 s', () => {
    expect(tickTolerance(1000)).toBe(50);
    expect(tickTolerance(10_000)).toBe(500);
    expect(tickTolerance(100)).toBe(20);
    expect(tickTolerance(60_000)).toBe(1000);
    expect(tickTolerance(86_400_000)).toBe(1000);
  });

  it('is at most a quarter of a very short gap', () => {
    expect(tickTolerance(40)).toBe(10);
  });
});

describe('claimEnd', () => {
  it('keeps a 1 ms run claimed until the tolerance before the next tick', () => {
    const now = T + 2;
    expect(claimEnd(everySecondAt(now), T + 1, now)).toBe(T + 950);
  });

  it('keeps the run of an instance that fired late for its tick claimed until the same time', () => {
    const now = T + 701;
    expect(claimEnd(everySecondAt(now), T + 700, now)).toBe(T + 950);
  });

  it('counts a run that starts within the tolerance before a tick for that tick', () => {
    const now = T + 961;
    expect(claimEnd(everySecondAt(now), T + 960, now)).toBe(T + 1950);
  });

  it('keeps nothing after a run that ends within the tolerance before the next tick', () => {
    const now = T + 970;
    expect(claimEnd(everySecondAt(now), T + 5, now)).toBeLessThanOrEqual(now);
  });

  it('claims the tick a run longer than its period overlapped, until the tolerance before the one after', () => {
    const now = T + 1300;
    expect(claimEnd(everySecondAt(now), T + 5, now)).toBe(T + 1950);
  });
});
