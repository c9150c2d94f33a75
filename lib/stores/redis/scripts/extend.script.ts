import { LEASE_LUA } from './lease.lua.js';
import { luaScript } from './lua-script.js';

/**
 * Sets the lease to a new length only while the token holds it; a missing key stays missing.
 *
 * KEYS: 1 lock.
 * ARGV: 1 token; 2 ttl ms.
 * Returns 1 when extended, 0 when another token (or a hand-off reservation) holds the key, -2 when nothing
 * does (expired, evicted, or lost in a restart; -2 as PTTL says of a missing key). A store on one server
 * treats 0 and -2 alike; a store over several nodes gives a lease back where it is missing (RedlockStore).
 */
export const EXTEND = luaScript(
  'extend',
  `${LEASE_LUA}
local current = redis.call('GET', KEYS[1])
if not current then return -2 end
if ownership(current, ARGV[1]) == 0 then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
`,
);
