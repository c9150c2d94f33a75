import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import { MAX_DURATION } from '../../utils/duration.js';
import { checkOptionNames, REDLOCK_STORE_OPTIONS } from '../../options/option-names.js';
import { validateBoolean, validateInteger, validateKeyPrefix } from '../../options/validate-options.js';
import { DEFAULT_HANDOFF_WINDOW } from '../redis/redis-store-options.js';
import { checkNodes, type CheckedNode, type RedlockNode } from './redlock-nodes.js';

/** Options of `RedlockStore`. */
export interface RedlockStoreOptions {
  /**
   * The independent Redis nodes (not replicas of each other, not one Cluster): an odd number, at least 3.
   * A lease is granted when a majority of them (N/2+1) grant it. Clients passed in are never closed by
   * the store; URLs and options become connections the store owns and closes.
   */
  readonly nodes: readonly RedlockNode[];
  /**
   * Namespace of every key and channel: non-empty, printable, without `*?[]\\{}` (see README, Options).
   * @default 'lock:'
   */
  readonly keyPrefix?: string;
  /**
   * Share of the TTL allowed for the clocks of the nodes running at different rates; a grant is valid for
   * `ttl - elapsed - (ttl * driftFactor + 2 ms)`. Below 1/3: a lease is renewed at a third of its ttl, and
   * must still be valid then. @default 0.01
   */
  readonly driftFactor?: number;
  /**
   * How long to wait for each node, in ms. A node silent past it counts as unavailable for that request,
   * so one dead node never stalls a lock; keep it well under the TTLs you use. @default 200
   */
  readonly timeout?: number;
  /** Wake waiters by pub/sub release notices from every node; off means waiters rely on backoff alone. @default true */
  readonly releaseNotices?: boolean;
  /**
   * After releasing a key that other processes wait for, reserve it against this store for this many ms
   * so a waiter elsewhere takes it next instead of this process re-taking it. `0` turns it off. A manager
   * using the store keeps every ttl at least twice as long.
   * @default 20
   */
  readonly handoffWindow?: number;
  /**
   * Start even when a node may evict keys (`maxmemory` set with a `maxmemory-policy` other than
   * `noeviction`): `verify()` then warns instead of failing.
   * @default false
   */
  readonly acceptEvictionRisk?: boolean;
}

/** {@link RedlockStoreOptions} checked, the nodes not yet connected. */
export interface RedlockStoreSettings {
  readonly nodes: readonly CheckedNode[];
  readonly keyPrefix: string;
  readonly driftFactor: number;
  readonly timeout: number;
  readonly releaseNotices: boolean;
  readonly handoffWindow: number;
  readonly acceptEvictionRisk: boolean;
}

/**
 * Checks every option of a `RedlockStore` without connecting to anything.
 * @throws LockConfigurationError naming the option
 */
export function checkRedlockStoreOptions(options: RedlockStoreOptions): RedlockStoreSettings {
  if (typeof options !== 'object' || options === null) {
    throw new LockConfigurationError('redlock', options, 'expected an options object with `nodes`');
  }
  checkOptionNames(options, REDLOCK_STORE_OPTIONS);
  const driftFactor = options.driftFactor ?? DEFAULT_DRIFT_FACTOR;
  if (typeof driftFactor !== 'number' || !(driftFactor >= 0 && driftFactor < 1 / 3)) {
    throw new LockConfigurationError(
      'driftFactor',
      options.driftFactor,
      'expected a number from 0 up to (not including) 1/3, the share of a TTL allowed for clock drift: a lease ' +
        'is renewed at a third of its ttl, and must still be valid then',
    );
  }
  return {
    nodes: checkNodes(options.nodes),
    keyPrefix: validateKeyPrefix(options.keyPrefix ?? 'lock:'),
    driftFactor,
    timeout: validateInteger('timeout', options.timeout ?? 200, 1, MAX_DURATION),
    releaseNotices: validateBoolean('releaseNotices', options.releaseNotices ?? true),
    handoffWindow: validateInteger('handoffWindow', options.handoffWindow ?? DEFAULT_HANDOFF_WINDOW, 0, MAX_DURATION),
    acceptEvictionRisk: validateBoolean('acceptEvictionRisk', options.acceptEvictionRisk ?? false),
  };
}

/** @default 0.01 */
const DEFAULT_DRIFT_FACTOR = 0.01;
