import { createHash } from 'node:crypto';
import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import type { LockLogger } from '../interfaces/lock-options.interface.js';
import type { LockStore } from '../interfaces/lock-store.interface.js';
import type { ForcedRelease } from '../interfaces/lock-summary.interface.js';
import { printable } from '../utils/printable.js';

/** Who asks for a forced release and how it is logged. */
export interface ForceReleaseContext {
  /** Who asked, for the log line (a user name, "admin page from 10.0.0.7", "cli"). */
  readonly by: string;
  readonly logger?: LockLogger;
  /** Whether the log line may name the key itself; else it names the key's SHA-256 fingerprint. */
  readonly showKey: boolean;
}

/**
 * Ends every lease and permit of `key` whoever holds them and raises its fence, through the store's
 * `revoking` capability; logs who did it and to which key (never a token).
 * @throws LockConfigurationError for a store without forced releases
 */
export async function forceRelease(
  store: LockStore,
  key: string,
  context: ForceReleaseContext,
): Promise<ForcedRelease> {
  const revoking = store.capabilities?.revoking;
  if (!revoking) {
    const why = store.capabilities?.absent?.revoking ?? 'it offers no revoking capability';
    throw new LockConfigurationError('store', store.constructor.name, `cannot force-release a lock: ${why}`);
  }
  const { ended, fence } = await revoking.revoke(key);
  const named = context.showKey ? `"${printable(key)}"` : `with fingerprint ${fingerprint(key)}`;
  context.logger?.warn(
    `Lock ${named} force-released by ${printable(context.by)}: ${ended} lease(s) or permit(s) ended, fence raised to ${fence}.`,
  );
  return { key, ended, fence };
}

/** A short SHA-256 of a key: an operator who knows the key can match it, a log reader cannot read it back. */
export function fingerprint(key: string): string {
  return `sha256:${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
}
