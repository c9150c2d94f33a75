import { LockError } from './lock.error.js';

/** A lock key is empty, too long, or a template placeholder could not be resolved to a scalar value. */
export class LockKeyError extends LockError {
  readonly code = 'LOCK_KEY_INVALID' as const;
  /**
   * What a client may be told (the body of a 400): the same facts as the message without any part of the
   * key or of the request's values, or `undefined` when the message cannot be told without them.
   */
  readonly clientMessage?: string;

  /**
   * @param message for the application: it may quote the key
   * @param template the key template the key came from, when there is one
   * @param options `clientMessage`: see the property; give it whenever the facts can be told without the key
   */
  constructor(
    message: string,
    readonly template?: string,
    options: { readonly clientMessage?: string } = {},
  ) {
    super(message);
    // the template is what clients may be told about the resource (see lockErrorPayload)
    this.keyTemplate = template;
    if (options.clientMessage !== undefined) this.clientMessage = options.clientMessage;
  }
}
