import { tickTolerance, type TickSchedule } from './tick-schedule.js';

/**
 * The ticks of `@Interval(period)`: every multiple of `period` ms since the epoch. Instances start their timers
 * at different times, but each fires once per period, so once in each window between two such ticks, and the
 * claim lets one of them run it.
 */
export class IntervalTicks implements TickSchedule {
  readonly tolerance: number;

  constructor(private readonly period: number) {
    this.tolerance = tickTolerance(period);
  }

  upcoming(): readonly [number, number] {
    const next = (Math.floor(Date.now() / this.period) + 1) * this.period;
    return [next, next + this.period];
  }
}
