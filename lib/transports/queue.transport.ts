import { throwError } from 'rxjs';
import type { LockError } from '../errors/lock.error.js';
import { lockErrorPayload, type LockErrorPayload } from './lock-error-payload.js';
import type { LockErrorMapping, LockTransport } from './lock-transport.interface.js';

/** `@nestjs/bullmq`'s metadata key of a `@Processor` class. */
const PROCESSOR_METADATA = 'bullmq:processor_metadata';

/** What a lock error needs from a BullMQ job to put it off: the one method of `Job` it calls. */
export interface DelayableJob {
  moveToDelayed(timestamp: number, token?: string): Promise<void>;
}

/** What the job mapping calls back into: `LockInterceptor.toJobError`. */
export interface JobErrorMapping extends LockErrorMapping {
  toJobError(
    error: LockError,
    payload: LockErrorPayload | undefined,
    job: DelayableJob | undefined,
    token: string | undefined,
  ): Error | Promise<Error>;
}

let bullmq: Promise<typeof import('bullmq')> | undefined;

/**
 * `bullmq` (for `DelayedError`), installed with `@nestjs/bullmq`: loaded at the first lock error of a job, so an
 * application without queues never needs it, and the application's own copy, whose `instanceof` checks the
 * worker makes.
 */
function loadBullMQ(): Promise<typeof import('bullmq')> {
  return (bullmq ??= import('bullmq'));
}

/** The payload codes of a job that no retry can fix. */
const UNRECOVERABLE = new Set<string | undefined>([
  'LOCK_KEY_INVALID',
  'IDEMPOTENCY_KEY_REUSED',
  'IDEMPOTENCY_KEY_INVALID',
]);

/**
 * BullMQ's answer to a job's lock error, by payload code:
 * - `LOCKED` (held by another job) and `LOCK_UNAVAILABLE` (store down, or this service shutting down): the job
 *   goes back to the delayed set for `retryAfter` and BullMQ's `DelayedError` tells the worker it was no
 *   failure, so no attempt is spent and no `failed` event fires;
 * - `LOCK_KEY_INVALID` (the job's data makes no key) and `IDEMPOTENCY_KEY_REUSED` / `IDEMPOTENCY_KEY_INVALID` (a
 *   retry cannot fix its idempotency key): BullMQ's `UnrecoverableError`, no retries;
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
  if (UNRECOVERABLE.has(payload?.code)) return new UnrecoverableError(payload?.message);
  const later = payload?.code === 'LOCKED' || payload?.code === 'LOCK_UNAVAILABLE';
  if (!later || typeof job?.moveToDelayed !== 'function' || token === undefined) return error;
  await job.moveToDelayed(Date.now() + (payload.retryAfter ?? 1) * 1000, token);
  return new DelayedError(payload.message);
}

/** The job mapping of an application without a `LockInterceptor`: the default, naming no resolved key. */
const DEFAULT_JOB_MAPPING: JobErrorMapping = {
  payloadOf: (error) => lockErrorPayload(error),
  toJobError: jobLockError,
};

/**
 * BullMQ queues: `process(job, token)` of a `@Processor` class, which BullMQ calls with no interceptor around it,
 * so its `@WithLock` wrapper maps its lock errors, even in an application without a `LockInterceptor`: by
 * default a busy key puts the job off without spending an attempt. Jobs carry no request: key templates read
 * the job (`<job.data.id>`).
 */
export const queueTransport: LockTransport<JobErrorMapping> = {
  type: 'queue',
  mayRunUnserved: ({ owner, methodName }) =>
    methodName === 'process' && Reflect.getMetadata(PROCESSOR_METADATA, owner) !== undefined,
  async mapError(error, { args }, mapping) {
    const [job, token] = args as [DelayableJob | undefined, string | undefined];
    const mapped = await mapping.toJobError(error, mapping.payloadOf(error), job, token);
    return throwError(() => mapped);
  },
  mapErrorAlone: (error, call) => queueTransport.mapError(error, call, DEFAULT_JOB_MAPPING),
};
