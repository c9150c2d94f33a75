/** `AbortSignal`'s own `aborted` getter and `throwIfAborted`, called after the check. */
const ownAborted = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'aborted') as {
  get(this: AbortSignal): boolean;
};
const ownThrowIfAborted = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'throwIfAborted') as {
  value(this: AbortSignal): void;
};

/**
 * Makes `signal` run `check` whenever its `aborted` is read or `throwIfAborted()` is called, before it answers:
 * `check` may abort it then. A lease's loss is otherwise found by a timer, and after a stall (a blocked event
 * loop, a frozen process) the timers that fell due before that one run first: a loop that checks its signal
 * before each write would write once more.
 */
export function checkSignalOnRead(signal: AbortSignal, check: () => void): void {
  Object.defineProperty(signal, 'aborted', {
    configurable: true,
    get: () => {
      check();
      return ownAborted.get.call(signal);
    },
  });
  Object.defineProperty(signal, 'throwIfAborted', {
    configurable: true,
    value: () => {
      check();
      ownThrowIfAborted.value.call(signal);
    },
  });
}
