import { hideProperty, LockError } from './lock.error.js';

/** A lock key is empty, too long, or a template placeholder could not be resolved to a scalar value. */
export class LockKeyError extends LockError {
  readonly code = 'LOCK_KEY_INVALID' as const;
  /**
   * What a client may be told (the body of a 400): the same facts as the message without any part of the
   * key or of the request's values, or `undefined` when the message cannot be told without them.
   */
  readonly clientMessage?: string;
  /** The message quoting the key, when there is one (not printed with the error; see {@link LockError}). */
  declare readonly keyedMessage: string | undefined;
  readonly #plainMessage: string;

  /**
   * @param message for the application: it names the template, a placeholder, the kind of a value, never
   *   the key or a value itself
   * @param template the key template the key came from, when there is one
   * @param options `clientMessage`: see the property; give it whenever the facts can be told without the key.
   *   `keyedMessage`: the message quoting the key, for applications that let messages show resolved keys
   */
  constructor(
    message: string,
    readonly template?: string,
    options: { readonly clientMessage?: string; readonly keyedMessage?: string } = {},
  ) {
    super(message);
    this.#plainMessage = message;
    // the template is what clients may be told about the resource (see lockErrorPayload)
    this.keyTemplate = template;
    if (options.clientMessage !== undefined) this.clientMessage = options.clientMessage;
    hideProperty(this, 'keyedMessage', options.keyedMessage);
  }

  /** @internal */
  override describeResource(_name: string | undefined, keyShown: boolean): string {
    return (keyShown ? this.keyedMessage : undefined) ?? this.#plainMessage;
  }
}
