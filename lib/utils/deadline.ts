/**
 * `promise`'s outcome when it settles within `ms`, else what `onTimeout` returns (or throws). The timer is
 * cleared either way, so a race never keeps the process alive; a `promise` that settles after the deadline is
 * nobody's, and its rejection is swallowed here rather than reported as unhandled. After a blocked event loop
 * due timers run before the sockets are read: the deadline is judged after the poll phase (setImmediate), so
 * an answer that arrived while this process was not running wins.
 */
export async function raceDeadline<T, U>(promise: Promise<T>, ms: number, onTimeout: () => U): Promise<T | U> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<U>((resolve, reject) => {
    const expire = (): void => {
      try {
        resolve(onTimeout());
      } catch (error) {
        reject(error);
      }
    };
    timer = setTimeout(() => setImmediate(expire), Math.max(0, ms));
  });
  promise.catch(() => undefined);
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
