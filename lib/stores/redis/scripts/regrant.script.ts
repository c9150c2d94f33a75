import { LEASE_LUA } from './lease.lua.js';
import { luaScript } from './lua-script.js';

/**
 * Gives a lease back to a node that lost it, only where nothing holds the key: never over another token, a
 * hand-off reservation or anything else (see RedlockStore for when this is safe). Leaves the fence counter
 * alone: the lease keeps the fence it was granted with.
 *
 * KEYS: 1 lock.
 * ARGV: 1 token; 2 ttl ms; 3 holder record ('' for none).
 * Returns 1 when granted again, 0 when the key was not free.
 */
export const REGRANT = luaScript(
  'regrant',
  `${LEASE_LUA}
if not redis.call('SET', KEYS[1], leaseValue(ARGV[1], ARGV[3]), 'NX', 'PX', ARGV[2]) then return 0 end
return 1
`,
);
