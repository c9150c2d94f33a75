import { LEASE_LUA } from './lease.lua.js';
import { luaScript } from './lua-script.js';

/**
 * Releases the lease only while the token holds it and no waiter marked it: the uncontended release, a GET and a
 * DEL of the lock key alone. A lease a waiter marked is left untouched for RELEASE (release.script.ts), which passes it on:
 * this script needs none of the line's keys or the notice's arguments, and most releases are of unmarked leases.
 *
 * KEYS: 1 lock. ARGV: 1 token.
 * Returns 1 when released, 0 when the lease was not ours any more, 2 when it is ours but marked (see
 * {@link isMarkedLease}).
 */
export const RELEASE_UNMARKED = luaScript(
  'release-unmarked',
  `${LEASE_LUA}
local own = ownership(redis.call('GET', KEYS[1]), ARGV[1])
if own == 1 then redis.call('DEL', KEYS[1]) end
return own
`,
);

/** Whether a reply of {@link RELEASE_UNMARKED} says the lease is ours but marked, and so still held. */
export function isMarkedLease(reply: unknown): boolean {
  return Number(reply) === 2;
}
