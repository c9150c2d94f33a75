import { performance } from 'node:perf_hooks';
import { setTimeoutAfterReads } from '../../utils/timeout-after-reads.js';

/**
 * How long an ask of an acquisition that waits may go unanswered at least, in ms, even when it is sent as the
 * wait ends: the last ask of a wait is sent at its end, and its answer (a grant as likely as not) still counts.
 */
export const LEAST_ANSWER_TIME = 1000;

/** How often, in ms, the asks in flight are checked for one past its time. */
const CHECK_EVERY = 50;

/** An ask in flight: when it is past its time, and what then ends the wait for its answer. */
interface PendingAnswer {
  readonly until: number;
  readonly overdue: () => void;
}

/**
 * Ends the wait for store answers that come too late for their acquisition's `wait`. A store can take far
 * longer than any wait to answer one call (a PostgreSQL statement queued behind a row lock or for a pooled
 * connection, a frozen server before its command timeout): the caller is answered at its wait's end instead,
 * and the call goes on without it. One timer for every ask of a manager, armed while any is in flight, not a
 * timer per ask: the uncontended path pays a set entry, not a timer.
 */
export class AnswerDeadlines {
  private readonly pending = new Set<PendingAnswer>();
  private cancelCheck?: () => void;

  /**
   * `answer`'s outcome when it settles by `until` (a `performance.now()` time), else `onOverdue`'s rejection,
   * no later than {@link CHECK_EVERY} ms after `until`; the answer is then left to the caller's own handlers.
   */
  within<T>(answer: Promise<T>, until: number, onOverdue: () => unknown): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry: PendingAnswer = { until, overdue: () => reject(onOverdue()) };
      this.pending.add(entry);
      this.cancelCheck ??= setTimeoutAfterReads(() => this.check(), CHECK_EVERY, { unref: true });
      answer.then(
        (value) => {
          this.pending.delete(entry);
          resolve(value);
        },
        (error: unknown) => {
          this.pending.delete(entry);
          reject(error);
        },
      );
    });
  }

  private check(): void {
    this.cancelCheck = undefined;
    const now = performance.now();
    for (const entry of this.pending) {
      if (entry.until > now) continue;
      this.pending.delete(entry);
      entry.overdue();
    }
    if (this.pending.size > 0)
      this.cancelCheck = setTimeoutAfterReads(() => this.check(), CHECK_EVERY, { unref: true });
  }
}
