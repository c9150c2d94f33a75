import { setTimeoutAfterReads } from './timeout-after-reads.js';

/**
 * `promise`'s outcome when it settles within `ms`, else what `onTimeout` returns (or throws). The timer is
 * cleared either way, so a race never keeps the process alive; a `promise` that settles after the deadline is
 * nobody's, and its rejection is swallowed here rather than reported as unhandled. The deadline is judged after
 * the sockets are read ({@link setTimeoutAfterReads}), so an answer that arrived during a stall wins.
 */
export async function raceDeadline<T, U>(promise: Promise<T>, ms: number, onTimeout: () => U): Promise<T | U> {
  let cancelDeadline!: () => void;
  const deadline = new Promise<U>((resolve, reject) => {
    const expire = (): void => {
      try {
        resolve(onTimeout());
      } catch (error) {
        reject(error);
      }
    };
    cancelDeadline = setTimeoutAfterReads(expire, ms);
  });
  promise.catch(() => undefined);
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    cancelDeadline();
  }
}
