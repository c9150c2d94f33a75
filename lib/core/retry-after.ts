import type { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import type { LockContention, LockLogger, RetryAfter } from '../interfaces/lock-options.interface.js';
import { printable } from '../utils/printable.js';
import type { HoldTimes } from './hold-times.js';

/**
 * Whole seconds after which a refused caller may succeed: the `retryAfter` option, else the smaller of the
 * holder's remaining lease and how long holders of the key template usually keep it, at least 1 s. A
 * `retryAfter` function that throws or gives no usable number is logged, and the estimate told instead.
 */
export function retryAfterSeconds(
  error: LockNotAcquiredError,
  option: RetryAfter | undefined,
  holdTimes: HoldTimes,
  logger: LockLogger | undefined,
): number {
  const template = error.keyTemplate;
  const usualHoldTime = template === undefined ? undefined : holdTimes.usual(template);
  const estimate = Math.max(1, Math.ceil(Math.min(error.remainingTime ?? 1000, usualHoldTime ?? Infinity) / 1000));
  if (option === undefined) return estimate;
  if (typeof option === 'number') return option;
  const contention: LockContention = {
    key: error.key,
    ...(template === undefined ? {} : { keyTemplate: template }),
    ...(error.remainingTime === undefined ? {} : { remainingTime: error.remainingTime }),
    ...(usualHoldTime === undefined ? {} : { usualHoldTime }),
    waited: error.waited,
  };
  let chosen: unknown;
  try {
    chosen = option(contention);
  } catch (failure) {
    chosen = failure;
  }
  if (typeof chosen === 'number' && Number.isFinite(chosen) && chosen >= 0) return Math.ceil(chosen);
  logger?.warn(
    `The retryAfter function of ${printable(template ?? 'a direct call')} gave ${printable(String(chosen))} instead of ` +
      `0 or more seconds; told the client ${estimate} s.`,
  );
  return estimate;
}
