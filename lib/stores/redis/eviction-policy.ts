import type { RedisClientPort } from './client/redis-client-port.js';
import { LockConfigurationError } from '../../errors/lock-configuration.error.js';

/** What one server's memory settings mean for the leases it keeps. */
export type EvictionCheck =
  | { readonly node: string; readonly outcome: 'safe' }
  | { readonly node: string; readonly outcome: 'evicting'; readonly policy: string; readonly maxmemory: number }
  | { readonly node: string; readonly outcome: 'unchecked'; readonly reason: string };

/**
 * Reads `maxmemory` and `maxmemory-policy` of one server in one `CONFIG GET`. The server evicts keys only when
 * `maxmemory` is set and the policy is not `noeviction`: every `allkeys-*` policy may evict any key, every
 * `volatile-*` one the keys with an expiry, which every lease has. Never throws: a `CONFIG GET` that is refused
 * (an ACL without it, a managed service that renames or disables CONFIG) or fails makes the server `unchecked`.
 * @param node how messages name the server (`host:port`)
 */
export async function checkEviction(client: Pick<RedisClientPort, 'config'>, node: string): Promise<EvictionCheck> {
  let reply: unknown;
  try {
    // a pattern, not two names: CONFIG GET takes a single parameter before Redis 7
    reply = await client.config('GET', 'maxmemory*');
  } catch (error) {
    return { node, outcome: 'unchecked', reason: whyUnchecked(error) };
  }
  const settings = new Map<string, string>();
  const pairs = Array.isArray(reply) ? (reply as unknown[]) : [];
  for (let index = 0; index + 1 < pairs.length; index += 2)
    settings.set(String(pairs[index]), String(pairs[index + 1]));
  const maxmemory = Number(settings.get('maxmemory'));
  const policy = settings.get('maxmemory-policy');
  if (policy === undefined || !Number.isFinite(maxmemory)) {
    return { node, outcome: 'unchecked', reason: 'its CONFIG GET did not answer maxmemory and maxmemory-policy' };
  }
  if (maxmemory === 0 || policy === 'noeviction') return { node, outcome: 'safe' };
  return { node, outcome: 'evicting', policy, maxmemory };
}

/** How a store takes an evicting server: the store option `acceptEvictionRisk`. */
export interface EvictionStance {
  /** Evicting servers become a warning instead of an error. */
  readonly acceptEvictionRisk: boolean;
}

/**
 * Judges the eviction checks of every server a store keeps leases on.
 * @returns the warnings: evicting servers when the risk is accepted, one for every server that was not checked
 * @throws LockConfigurationError naming every evicting server, its policy and the fix, unless the risk is accepted
 */
export function judgeEviction(checks: readonly EvictionCheck[], { acceptEvictionRisk }: EvictionStance): string[] {
  const acceptRisk = acceptEvictionRisk;
  const evicting = checks.filter((check) => check.outcome === 'evicting');
  const unchecked = checks.filter((check) => check.outcome === 'unchecked');
  const warnings: string[] = [];
  if (evicting.length > 0 && !acceptRisk) {
    throw new LockConfigurationError(
      'maxmemory-policy',
      evicting.map((check) => `${check.policy} on ${check.node}`).join(', '),
      `expected noeviction on every Redis that keeps locks, as long as its maxmemory is set: ${describe(evicting)}. ` +
        'An evicted lease lets a second holder take the lock while the first still works, and the first hears of ' +
        'it at its next renewal at the earliest. Fix: CONFIG SET maxmemory-policy noeviction on that server and ' +
        "the same in its redis.conf or your provider's settings (a full server then refuses writes, which a lock " +
        'reports as a LockStoreError, never as a second holder), or keep locks on a Redis of their own; to start ' +
        'anyway with a warning, set acceptEvictionRisk: true',
    );
  }
  if (evicting.length > 0) {
    warnings.push(
      `Redis may evict held leases: ${describe(evicting)}. Started anyway because acceptEvictionRisk is true: a ` +
        'lease evicted under memory pressure is reported to its holder as lost (reason "taken") at its next ' +
        'renewal, while a second holder may already have the lock. Set maxmemory-policy noeviction to close this.',
    );
  }
  if (unchecked.length > 0) {
    const nodes = unchecked.map((check) => `${check.node} (${check.reason})`).join(', ');
    warnings.push(
      `Could not check the eviction policy of Redis ${nodes}: a server that evicts keys under memory pressure ` +
        'can drop a held lease and let a second holder in. Check by hand that maxmemory-policy is noeviction or ' +
        "maxmemory is 0: redis-cli -h <host> -p <port> CONFIG GET 'maxmemory*', or your provider's " +
        'maxmemory-policy parameter; allow the lock user CONFIG GET (+config|get) to have it checked at startup.',
    );
  }
  return warnings;
}

/** Each evicting server, its settings and what its policy can evict. */
function describe(evicting: ReadonlyArray<EvictionCheck & { outcome: 'evicting' }>): string {
  return evicting
    .map((check) => {
      const what = check.policy.startsWith('allkeys-')
        ? 'may evict any key, a held lease included'
        : check.policy.startsWith('volatile-')
          ? 'evicts keys that have an expiry, and every lease has one'
          : 'is not noeviction, so it may evict a held lease';
      return `${check.node} has maxmemory ${check.maxmemory} bytes with maxmemory-policy ${check.policy}, which ${what}`;
    })
    .join('; ');
}

function whyUnchecked(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/NOPERM/.test(message)) return 'the Redis user may not run CONFIG GET';
  if (/unknown command/i.test(message)) return 'CONFIG is disabled or renamed there, as on many managed services';
  return `CONFIG GET failed: ${message}`;
}
