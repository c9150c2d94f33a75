import {
  SCHEDULE_CRON_OPTIONS_METADATA,
  SCHEDULE_INTERVAL_OPTIONS_METADATA,
  SCHEDULER_NAME_METADATA,
  SCHEDULER_TYPE_METADATA,
} from '../lock.constants.js';

/** How `@nestjs/schedule` runs a method, as its decorators recorded it. */
export type MethodSchedule =
  /** `@Cron(cronTime, { name, timeZone, utcOffset })`; `cronTime` an expression, or a date for one run. */
  | {
      readonly kind: 'cron';
      readonly cronTime: unknown;
      readonly name?: string;
      readonly timeZone?: string;
      readonly utcOffset?: number;
    }
  /** `@Interval(period)` */
  | { readonly kind: 'interval'; readonly period: number }
  /** `@Timeout(delay)`: one run */
  | { readonly kind: 'timeout' };

/** `@nestjs/schedule`'s `SchedulerType`. */
const CRON = 1;
const TIMEOUT = 2;
const INTERVAL = 3;

/**
 * How `method` is scheduled, read from the metadata `@Cron`, `@Interval` or `@Timeout` put on it (or on the
 * method it wraps: `@WithLock` copies it); `undefined` for a method that is not scheduled.
 */
export function scheduleOf(method: object): MethodSchedule | undefined {
  const type: unknown = Reflect.getMetadata(SCHEDULER_TYPE_METADATA, method);
  if (type === TIMEOUT) return { kind: 'timeout' };
  if (type === INTERVAL) {
    const period = (Reflect.getMetadata(SCHEDULE_INTERVAL_OPTIONS_METADATA, method) as { timeout?: unknown })?.timeout;
    return typeof period === 'number' && period > 0 ? { kind: 'interval', period } : undefined;
  }
  if (type !== CRON) return undefined;
  const options = (Reflect.getMetadata(SCHEDULE_CRON_OPTIONS_METADATA, method) ?? {}) as Record<string, unknown>;
  const name: unknown = Reflect.getMetadata(SCHEDULER_NAME_METADATA, method);
  return {
    kind: 'cron',
    cronTime: options.cronTime,
    ...(typeof name === 'string' ? { name } : {}),
    ...(typeof options.timeZone === 'string' ? { timeZone: options.timeZone } : {}),
    ...(typeof options.utcOffset === 'number' ? { utcOffset: options.utcOffset } : {}),
  };
}
