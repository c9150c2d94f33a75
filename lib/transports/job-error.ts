import type { LockErrorPayload } from './lock-error-payload.js';
import { loadBullMQ } from './optional-peers.js';

/** What a lock error needs from a BullMQ job to put it off: the one method of `Job` it calls. */
export interface DelayableJob {
  moveToDelayed(timestamp: number, token?: string): Promise<void>;
}

/**
 * BullMQ's answer to a job's lock error, by payload code:
 * - `LOCKED` (held by another job) and `LOCK_UNAVAILABLE` (store down, or this service shutting down): the job
 *   goes back to the delayed set for `retryAfter` and BullMQ's `DelayedError` tells the worker it was no
 *   failure, so no attempt is spent and no `failed` event fires;
 * - `LOCK_KEY_INVALID` (the job's data makes no key): BullMQ's `UnrecoverableError`, no retries;
 * - anything else (`LOCK_LOST`: the lease ended while the job ran): the error itself, so the attempt fails
 *   and BullMQ retries it per the job's `attempts` and `backoff`.
 * @param token the worker's lock token of the job, BullMQ's second argument to `process(job, token)`
 */
export async function jobLockError(
  error: Error,
  payload: LockErrorPayload | undefined,
  job: DelayableJob | undefined,
  token: string | undefined,
): Promise<Error> {
  const { DelayedError, UnrecoverableError } = await loadBullMQ();
  if (payload?.code === 'LOCK_KEY_INVALID') return new UnrecoverableError(payload.message);
  const later = payload?.code === 'LOCKED' || payload?.code === 'LOCK_UNAVAILABLE';
  if (!later || typeof job?.moveToDelayed !== 'function' || token === undefined) return error;
  await job.moveToDelayed(Date.now() + (payload.retryAfter ?? 1) * 1000, token);
  return new DelayedError(payload.message);
}
