import { LockError } from './lock.error.js';

/** A lock key is empty, too long, or a template placeholder could not be resolved to a scalar value. */
export class LockKeyError extends LockError {
  readonly code = 'LOCK_KEY_INVALID' as const;

  constructor(
    message: string,
    readonly template?: string,
  ) {
    super(message);
    // the template is what clients may be told about the resource (see lockErrorPayload)
    this.keyTemplate = template;
  }
}
