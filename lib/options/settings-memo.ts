import type { LockSettings } from './lock-settings.js';

/**
 * The settings last resolved from an options object, reused for the next options object with the same names
 * and values: a call written as `acquire(key, { ttl, wait })` passes a new object each time, and checking and
 * merging it again would cost every acquisition. It holds one entry (no growth with user input) and copies
 * the values it compared, so an options object changed after a call is resolved again. Only plain objects
 * take part: names inherited from a prototype would not be compared. Objects among the
 * values (`retry`) are compared by nothing: such options are always resolved, since they can change inside.
 */
export class SettingsMemo {
  private names: readonly string[] = [];
  private values: readonly unknown[] = [];
  private settings?: LockSettings;

  /** The settings of an earlier options object with the same names and values as `options`, if any. */
  get(options: object): LockSettings | undefined {
    if (this.settings === undefined || !isPlain(options)) return undefined;
    const names = Object.keys(options);
    if (names.length !== this.names.length) return undefined;
    for (let i = 0; i < names.length; i++) {
      if (names[i] !== this.names[i]) return undefined;
      if (!Object.is((options as Record<string, unknown>)[names[i]], this.values[i])) return undefined;
    }
    return this.settings;
  }

  /** Remembers `settings` as those of `options`, unless a value of it is an object. */
  set(options: object, settings: LockSettings): void {
    if (!isPlain(options)) return;
    const names = Object.keys(options);
    const values = names.map((name) => (options as Record<string, unknown>)[name]);
    if (values.some((value) => typeof value === 'object' && value !== null)) return;
    this.names = names;
    this.values = values;
    this.settings = settings;
  }
}

/** Whether `value` is an object literal (its names are all its own). */
function isPlain(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
