/**
 * `promise`'s outcome when it settles within `ms`, else what `onTimeout` returns (or throws). The timer is
 * cleared either way, so a race never keeps the process alive; a `promise` that settles after the deadline is
 * nobody's, and its rejection is swallowed here rather than reported as unhandled.
 */
export async function raceDeadline<T, U>(promise: Promise<T>, ms: number, onTimeout: () => U): Promise<T | U> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<U>((resolve, reject) => {
    timer = setTimeout(
      () => {
        try {
          resolve(onTimeout());
        } catch (error) {
          reject(error);
        }
      },
      Math.max(0, ms),
    );
  });
  promise.catch(() => undefined);
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
