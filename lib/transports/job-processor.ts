import { isLockError } from '../errors/lock.error.js';
import { BULLMQ_PROCESSOR_METADATA } from '../lock.constants.js';
import { lockErrorPayload } from './lock-error-payload.js';
import type { LockManager } from '../core/lock-manager.js';
import { errorMapperFor } from '../lock-registry.js';
import { jobLockError, type DelayableJob } from './job-error.js';

/** Whether `method` of `instance` is what BullMQ calls for each job: `process` of a `@Processor` class. */
export function isJobProcessor(instance: unknown, method: string | symbol): boolean {
  const type = (instance as { constructor?: object } | null | undefined)?.constructor;
  return (
    method === 'process' && type !== undefined && Reflect.getMetadata(BULLMQ_PROCESSOR_METADATA, type) !== undefined
  );
}

/**
 * Rethrows what `process(job, token)` failed with as BullMQ should see it: a lock error through the
 * application's `LockInterceptor.toJobError` (by default, a busy key delays the job), anything else untouched.
 */
export async function rethrowForJob(service: LockManager, error: unknown, args: readonly unknown[]): Promise<never> {
  if (!isLockError(error)) throw error;
  const [job, token] = args as [DelayableJob | undefined, string | undefined];
  const mapper = errorMapperFor(service);
  throw mapper
    ? await mapper.jobError(error, job, token)
    : await jobLockError(error, lockErrorPayload(error), job, token);
}
