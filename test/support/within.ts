import { raceDeadline } from '../../lib/utils/deadline.js';

/**
 * `promise`, or a rejection naming `what` once `ms` have passed without it: a test step that hangs fails
 * with its own name instead of jest's timeout for the whole test.
 */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return raceDeadline(promise, ms, (): never => {
    throw new Error(`${what} did not happen within ${ms} ms`);
  });
}

/** Why `signal` aborted, as soon as it has: at once when it already had. */
export function abortReason(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}
