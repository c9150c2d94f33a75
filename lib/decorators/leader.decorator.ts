import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { LEADER_METADATA } from '../lock.constants.js';
import {
  checkLeadershipName,
  resolveLeadershipOptions,
  type LeadershipOptions,
  type LeadershipSettings,
} from '../leadership/leadership-options.js';

/** What `@Leader` records on its method, for the explorer that starts its campaign. */
export interface LeaderMethod {
  /** The leadership's name. */
  readonly name: string;
  /** `Class.method`, for messages. */
  readonly label: string;
  /** The options as written, handed to `lead()`. */
  readonly options: LeadershipOptions;
  /** The options checked, to compare two methods of one leadership. */
  readonly settings: LeadershipSettings;
}

/**
 * Runs the method each time this instance becomes the leader of `name`, from the application's bootstrap to
 * its shutdown, with the term as its argument (`{ name, term, signal, isLeader }`): one instance at a time
 * runs it, across every instance that campaigns for `name`. The method should work until `signal` aborts
 * (the term was lost, or `app.close()` resigns it) and then return; when it returns or throws (logged), the
 * instance resigns and campaigns again after `backoff`. On a provider's method only (not a controller's, nor
 * a request-scoped provider's). Methods of one name share a term and must have the same options.
 * @param name the leadership's name, the same in every instance (at most 256 characters)
 * @throws LockConfigurationError at decoration time for a bad name or option, and at bootstrap for a method
 *   that is not a provider's, or a name two methods give different options
 * @example
 * ```ts
 * @Injectable()
 * export class OutboxRelay {
 *   @Leader('outbox-relay', { ttl: '10s' })
 *   async relay({ term, signal }: Leadership) {
 *     while (!signal.aborted) await this.publishPending(term, signal);
 *   }
 *
 *   private async publishPending(term: number, signal: AbortSignal) {}
 * }
 * ```
 */
export function Leader(name: string, options: LeadershipOptions = {}): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const label = `${(target as { constructor?: { name?: string } }).constructor?.name ?? 'anonymous'}.${String(propertyKey)}`;
    const method = descriptor.value as unknown;
    if (typeof method !== 'function') throw new LockConfigurationError('@Leader', label, 'expected it on a method');
    if (Reflect.getOwnMetadata?.(LEADER_METADATA, method)) {
      throw new LockConfigurationError('@Leader', label, 'it is applied twice; one method leads one leadership');
    }
    checkLeadershipName(name, `@Leader(${label}) name`);
    const settings = resolveLeadershipOptions(options, `@Leader(${label})`);
    Reflect.defineMetadata(LEADER_METADATA, { name, label, options, settings } satisfies LeaderMethod, method);
    return descriptor;
  };
}
