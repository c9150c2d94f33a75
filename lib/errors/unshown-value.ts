/**
 * A value a `LockConfigurationError` refuses without showing it (a password, a caller's key), described by its
 * kind only: "got a number (not shown)".
 */
export class UnshownValue {
  /** @param description what the value was, without it: `a number`, `a string of 12 characters` */
  constructor(readonly description: string) {}

  /** A value described by its type alone (`a string`, `a number`, `an object`, `null`). */
  static of(value: unknown): UnshownValue {
    if (value === null) return new UnshownValue('null');
    const type = Array.isArray(value) ? 'array' : typeof value;
    return new UnshownValue(`${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`);
  }
}
