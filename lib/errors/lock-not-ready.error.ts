import { LockError } from './lock.error.js';

/** A `@WithLock` method (or an `@Idempotent()` handler) ran before any LockModule finished initialising. */
export class LockNotReadyError extends LockError {
  readonly code = 'LOCK_NOT_READY' as const;

  /** @param decorator the decorator that needs the service */
  constructor(method: string, decorator = '@WithLock') {
    super(
      `${method} is decorated with ${decorator} but no LockService is ready: import LockModule.forRoot() ` +
        'in the module that provides it, and call the method after the application has initialised ' +
        '(await app.init() or app.listen()).',
    );
  }
}
