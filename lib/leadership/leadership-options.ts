import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { toMilliseconds } from '../options/duration-option.js';
import { checkOptionNames, type OptionNames, type OptionsKind } from '../options/option-names.js';
import { validateTtl } from '../options/lock-settings.js';
import type { Duration } from '../utils/duration.js';

/** How an instance campaigns for a leadership (`lead()`, `@Leader`); every field has a default. */
export interface LeadershipOptions {
  /**
   * The leader's lease: renewed while it leads, it outlives a leader that crashed or froze by at most this
   * long, so a successor leads within about `ttl` of a crash (at once after a resignation). Checked like
   * every lease's ttl, against the store too. @default the module's ttl ('30s')
   */
  readonly ttl?: Duration;
  /**
   * How long this instance waits before it campaigns again after its term ended (its function returned or
   * threw) or the store failed, so that another instance may take over and a failing function or store is
   * not hammered. @default '1s'
   */
  readonly backoff?: Duration;
}

/** Leadership options with every default filled in and every value checked. */
export interface LeadershipSettings {
  /** The lease's ttl in ms, or `undefined` for the manager's default. */
  readonly ttl?: number;
  /** The pause before campaigning again, in ms. */
  readonly backoff: number;
}

/** @default '1s' */
export const DEFAULT_LEADERSHIP_BACKOFF = 1000;

/** The longest leadership name, in characters. */
export const MAX_LEADERSHIP_NAME_LENGTH = 256;

/** The option names of `lead()` and `@Leader`. */
export const LEADERSHIP_OPTIONS: OptionsKind = {
  title: 'leadership options',
  names: { ttl: true, backoff: true } as const satisfies OptionNames<LeadershipOptions>,
};

/**
 * Checks a leadership's name: a non-empty string of printable characters, at most
 * {@link MAX_LEADERSHIP_NAME_LENGTH} long. Names are the application's own constants (`'outbox-relay'`), never
 * user input: they appear in logs, events and metrics as they are.
 * @throws LockConfigurationError naming `option`
 */
export function checkLeadershipName(name: unknown, option: string): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_LEADERSHIP_NAME_LENGTH) {
    throw new LockConfigurationError(
      option,
      name,
      `expected a leadership name: a non-empty string of at most ${MAX_LEADERSHIP_NAME_LENGTH} characters`,
    );
  }
  if (/[\u0000-\u001f\u007f]/.test(name)) {
    throw new LockConfigurationError(option, name, 'expected no control characters in a leadership name');
  }
  return name;
}

/**
 * Checks leadership options (names and values); a ttl is checked against the store when the campaign
 * starts.
 * @param scope where they come from, for messages (e.g. `lead(outbox)`, `@Leader(Relay.run)`)
 * @throws LockConfigurationError naming the first option that cannot work
 */
export function resolveLeadershipOptions(options: LeadershipOptions | undefined, scope: string): LeadershipSettings {
  if (options === undefined) return { backoff: DEFAULT_LEADERSHIP_BACKOFF };
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new LockConfigurationError(scope, options, 'expected an options object');
  }
  checkOptionNames(options, LEADERSHIP_OPTIONS, scope);
  const backoff =
    options.backoff === undefined
      ? DEFAULT_LEADERSHIP_BACKOFF
      : toMilliseconds(options.backoff, `${scope}.backoff`, { zero: 'allowed' });
  return options.ttl === undefined ? { backoff } : { ttl: validateTtl(`${scope}.ttl`, options.ttl), backoff };
}
