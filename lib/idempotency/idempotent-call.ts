import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../errors/idempotency-key-invalid.error.js';
import { UnshownValue } from '../errors/unshown-value.js';
import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import type { IdempotencyOptions } from '../interfaces/idempotent-options.interface.js';
import { resolveIdempotencyCall } from './idempotency-settings.js';
import { runIdempotent, type IdempotencyHost } from './idempotent-run.js';

/**
 * `LockService.idempotent()`: runs `fn` once per key (and scope); a later call with the key gets the first
 * call's result back, as JSON keeps it, for the `ttl`. A call that throws keeps nothing, so a retry runs again.
 */
export async function idempotentCall<T>(
  host: IdempotencyHost,
  key: string,
  fn: () => T | Promise<T>,
  options: IdempotencyOptions = {},
): Promise<T> {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    // the key itself is never shown: it may be a client's value
    throw new LockConfigurationError(
      'idempotent() key',
      typeof key === 'string' ? new UnshownValue(`a string of ${key.length} characters`) : UnshownValue.of(key),
      `expected a string of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`,
    );
  }
  if (typeof fn !== 'function') throw new LockConfigurationError('idempotent() fn', fn, 'expected a function');
  const settings = resolveIdempotencyCall(options);
  const answer = await runIdempotent(host, {
    key,
    scope: settings.scope,
    fingerprint: settings.fingerprint,
    settings,
    label: 'idempotent()',
    keyName: 'idempotency key',
    option: 'idempotent()',
    run: async () => fn(),
    // JSON of { value }: `undefined` comes back as itself
    encode: (outcome) => ('result' in outcome ? JSON.stringify({ value: outcome.result }) : undefined),
    replay: (kept) => (JSON.parse(kept) as { value: T }).value,
  });
  return answer.result;
}
