import type { LockErrorPayload } from '../lock-error-payload.js';
import { loadBullMQ } from './optional-peers.js';

/** What a lock error needs from a BullMQ job to put it off: the one method of `Job` it calls. */
export interface DelayableJob {
  moveToDelayed(timestamp: number, token?: string): Promise<void>;
}

/**
 * BullMQ's answer to a job whose lock is held: the job goes back to the delayed set until the holder's lease
 * may have ended (`retryAfter`), and BullMQ's `DelayedError` tells the worker it was not a failure, so no
 * attempt is spent and no `failed` event fires. Other lock errors stay errors: the job fails and BullMQ
 * retries it per its `attempts` and `backoff`.
 * @param token the worker's lock token of the job, BullMQ's second argument to `process(job, token)`
 */
export async function delayJob(
  error: Error,
  payload: LockErrorPayload | undefined,
  job: DelayableJob | undefined,
  token: string | undefined,
): Promise<Error> {
  if (payload?.code !== 'LOCKED' || typeof job?.moveToDelayed !== 'function' || token === undefined) return error;
  const { DelayedError } = await loadBullMQ();
  await job.moveToDelayed(Date.now() + (payload.retryAfter ?? 1) * 1000, token);
  return new DelayedError(payload.message);
}
