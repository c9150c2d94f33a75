import { UnshownValue } from '../errors/unshown-value.js';
import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import type {
  IdempotencyBaseOptions,
  IdempotencyOptions,
  IdempotentOptions,
} from '../interfaces/idempotent-options.interface.js';
import { toMilliseconds } from '../options/duration-option.js';
import { checkOptionNames, type OptionNames, type OptionsKind } from '../options/option-names.js';
import { validateBoolean, validateInteger } from '../options/validate-options.js';

/** How long a response is kept by default: a day, as clients retry within hours at most. */
export const DEFAULT_RECORD_TTL = 24 * 3_600_000;
/** The largest stored response by default, in bytes. */
export const DEFAULT_MAX_BODY_BYTES = 1_048_576;
/** The header of the IETF draft (draft-ietf-httpapi-idempotency-key-header). */
export const DEFAULT_IDEMPOTENCY_HEADER = 'Idempotency-Key';

const BASE_NAMES = { ttl: true, wait: true, maxBodyBytes: true } as const satisfies OptionNames<IdempotencyBaseOptions>;

/** Options of `@Idempotent()`. */
export const IDEMPOTENT_OPTIONS: OptionsKind = {
  title: '@Idempotent options',
  names: { ...BASE_NAMES, header: true, required: true, scope: true } as const satisfies OptionNames<IdempotentOptions>,
  elsewhere: {
    fingerprint:
      'an HTTP request is told apart by its method, path and body already; to keep callers apart, give a scope',
  },
};

/** Options of `LockService.idempotent()`. */
export const IDEMPOTENCY_OPTIONS: OptionsKind = {
  title: 'idempotent() options',
  names: { ...BASE_NAMES, scope: true, fingerprint: true } as const satisfies OptionNames<IdempotencyOptions>,
  elsewhere: {
    header: 'it is an option of @Idempotent(), which reads the key from a request header',
    required: 'it is an option of @Idempotent(); idempotent() always has its key',
  },
};

/** The options both entry points share, checked and in ms. */
export interface IdempotencySettings {
  readonly ttl: number;
  readonly wait: number;
  readonly maxBodyBytes: number;
}

/**
 * Checks the options both entry points share; a bad value or an unknown name is a `LockConfigurationError`.
 * @param scope where the options are given, for messages (`@Idempotent(Orders.create)`, `idempotent()`)
 */
export function resolveIdempotencySettings(
  options: IdempotencyBaseOptions,
  kind: OptionsKind,
  scope: string,
): IdempotencySettings {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new LockConfigurationError(scope, options, 'expected an options object');
  }
  checkOptionNames(options, kind, scope);
  return {
    ttl: options.ttl === undefined ? DEFAULT_RECORD_TTL : toMilliseconds(options.ttl, `${scope}.ttl`),
    wait: options.wait === undefined ? 0 : toMilliseconds(options.wait, `${scope}.wait`, { zero: 'allowed' }),
    maxBodyBytes:
      options.maxBodyBytes === undefined
        ? DEFAULT_MAX_BODY_BYTES
        : validateInteger(`${scope}.maxBodyBytes`, options.maxBodyBytes, 1, 512 * 1_048_576),
  };
}

/** The settings of `@Idempotent()`: the shared ones, the header (lower-case, as Node names it), `required`. */
export interface IdempotentSettings extends IdempotencySettings {
  /** The header as given, for messages. */
  readonly header: string;
  /** The header in lower case, as requests carry it. */
  readonly headerName: string;
  readonly required: boolean;
  readonly scope?: string;
}

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Checks the options of `@Idempotent()` on `label` (`Class.method`). */
export function resolveIdempotentSettings(options: IdempotentOptions, label: string): IdempotentSettings {
  const scope = `@Idempotent(${label})`;
  const shared = resolveIdempotencySettings(options, IDEMPOTENT_OPTIONS, scope);
  const header = options.header ?? DEFAULT_IDEMPOTENCY_HEADER;
  if (typeof header !== 'string' || !HEADER_NAME.test(header)) {
    throw new LockConfigurationError(`${scope}.header`, header, 'expected an HTTP header name like "Idempotency-Key"');
  }
  const required = options.required === undefined ? false : validateBoolean(`${scope}.required`, options.required);
  if (options.scope !== undefined && (typeof options.scope !== 'string' || options.scope.length === 0)) {
    throw new LockConfigurationError(`${scope}.scope`, options.scope, "expected a key template like '<user.id>'");
  }
  return {
    ...shared,
    header,
    headerName: header.toLowerCase(),
    required,
    ...(options.scope === undefined ? {} : { scope: options.scope }),
  };
}

/** Checks the options of one `LockService.idempotent()` call. */
export function resolveIdempotencyCall(options: IdempotencyOptions): IdempotencySettings & {
  readonly scope: string;
  readonly fingerprint: string;
} {
  const shared = resolveIdempotencySettings(options, IDEMPOTENCY_OPTIONS, 'idempotent()');
  for (const name of ['scope', 'fingerprint'] as const) {
    const value = options[name];
    if (value !== undefined && typeof value !== 'string') {
      // a caller's value (a user id): its type only
      throw new LockConfigurationError(`idempotent().${name}`, UnshownValue.of(value), 'expected a string');
    }
  }
  return { ...shared, scope: options.scope ?? '', fingerprint: options.fingerprint ?? '' };
}
