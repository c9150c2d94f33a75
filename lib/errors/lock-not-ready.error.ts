import { LockError } from './lock.error.js';

/** A `@WithLock` method ran before any LockModule finished initialising. */
export class LockNotReadyError extends LockError {
  readonly code = 'LOCK_NOT_READY' as const;

  constructor(method: string) {
    super(
      `${method} is decorated with @WithLock but no LockService is ready: import LockModule.forRoot() ` +
        'in the module that provides it, and call the method after the application has initialised ' +
        '(await app.init() or app.listen()).',
    );
  }
}
