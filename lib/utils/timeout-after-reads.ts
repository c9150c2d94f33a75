/**
 * Calls `fn` once `ms` have passed *and* this process has read its sockets since. After a blocked event loop
 * (a GC pause, a starved machine) Node runs due timers before it reads the sockets, so a deadline judged in
 * the timer would call an answer that arrived during the stall late; `setImmediate` runs after the poll
 * phase, so `fn` sees every answer that came meanwhile. Returns a function that cancels the call, also
 * between the timer and the deferred call. With `unref`, the timer does not keep the process alive.
 */
export function setTimeoutAfterReads(fn: () => void, ms: number, options: { unref?: boolean } = {}): () => void {
  let deferred: NodeJS.Immediate | undefined;
  // the deferred call stays referenced: an unreferenced immediate does not keep the poll phase from
  // blocking, so it would run only after the next event
  const timer = setTimeout(() => (deferred = setImmediate(fn)), Math.max(0, ms));
  if (options.unref) timer.unref();
  return () => {
    clearTimeout(timer);
    if (deferred) clearImmediate(deferred);
  };
}
