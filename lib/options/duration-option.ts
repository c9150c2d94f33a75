import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { MAX_DURATION, type Duration } from '../utils/duration.js';

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const pattern = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)$/;

/** What a duration option may be besides a positive number of ms. */
export interface DurationRange {
  /** `0` is meaningful for this option (e.g. `wait: 0` means fail fast). */
  readonly zero: 'allowed' | 'refused';
}

/**
 * Converts a duration to whole milliseconds, or throws `LockConfigurationError` naming `option`.
 * @param range whether `0` is meaningful for this option; by default it is not
 */
export function toMilliseconds(value: Duration, option: string, range: DurationRange = { zero: 'refused' }): number {
  const allowZero = range.zero === 'allowed';
  let ms: number | undefined;
  if (typeof value === 'number') ms = value;
  else if (typeof value === 'string') {
    const match = pattern.exec(value.trim());
    if (match) ms = scale(match[1], units[match[2]]);
  }
  const expectation = `expected ${allowZero ? 'zero or a positive' : 'a positive'} whole number of milliseconds or a string like "30s"`;
  if (ms === undefined || !Number.isFinite(ms) || !Number.isInteger(ms) || ms < 0 || (ms === 0 && !allowZero)) {
    throw new LockConfigurationError(option, value, expectation);
  }
  if (ms > MAX_DURATION)
    throw new LockConfigurationError(option, value, `expected at most ${MAX_DURATION} ms (24 days)`);
  return ms;
}

/**
 * `amount * unit` computed exactly on the decimal digits: in floating point, '16.1s' is 16100.000000000002 ms
 * and would be refused as not whole. NaN when the product has a fraction of a millisecond.
 */
function scale(amount: string, unit: number): number {
  const [whole, fraction = ''] = amount.split('.');
  const product = BigInt(whole + fraction) * BigInt(unit);
  const divisor = 10n ** BigInt(fraction.length);
  return product % divisor === 0n ? Number(product / divisor) : NaN;
}
