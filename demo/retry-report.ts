import type { RetryAttempt } from './retried-purchase.js';

/** What the retried purchase (one `Idempotency-Key`, sent many times) showed in one run. */
export interface RetryReport {
  /** Requests sent with the key: the burst, the retries after a 409, the late retries. */
  readonly attempts: number;
  /** Answers of a purchase that ran (201, not a replay). Must be 1 with locks. */
  readonly ran: number;
  /** 409 with `Retry-After`: the first attempt was still running. */
  readonly conflicts: number;
  /** 201 with `Idempotent-Replayed: true`: the first attempt's answer again, the handler not run. */
  readonly replayed: number;
  /** Any other answer, or none. */
  readonly failed: number;
  /** Distinct sale ids in the 201 answers: what the buyer was told it bought. Must be 1 with locks. */
  readonly saleIds: number;
  /** Units the stock lost over all attempts. Must be 1 with locks. */
  readonly deducted: number;
}

/** Turns the attempts of a retried purchase and the stock before and after into its {@link RetryReport}. */
export function analyseRetries(
  attempts: readonly RetryAttempt[],
  stockBefore: number,
  stockAfter: number,
): RetryReport {
  const ran = attempts.filter((attempt) => attempt.status === 201 && !attempt.replayed).length;
  const replayed = attempts.filter((attempt) => attempt.status === 201 && attempt.replayed).length;
  const conflicts = attempts.filter((attempt) => attempt.status === 409 && attempt.retryAfter !== undefined).length;
  const saleIds = new Set(attempts.flatMap((attempt) => (attempt.saleId === undefined ? [] : [attempt.saleId])));
  return {
    attempts: attempts.length,
    ran,
    conflicts,
    replayed,
    failed: attempts.length - ran - replayed - conflicts,
    saleIds: saleIds.size,
    deducted: stockBefore - stockAfter,
  };
}

/** Whether a run with locks bought once for the buyer who sent one purchase many times. */
export function retriesHold(report: RetryReport): boolean {
  return report.ran === 1 && report.saleIds === 1 && report.deducted === 1 && report.failed === 0;
}
