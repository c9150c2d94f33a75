import { LEASE_LUA } from './lease.lua.js';
import { luaScript } from './lua-script.js';

/**
 * {@link EXTEND} for many leases in one call: how the renewal scheduler renews a batch with one script
 * run instead of one per lease (only where every key lives on one server: not across Cluster slots).
 *
 * KEYS: 1..n the lock of each lease.
 * ARGV: 2i-1 the token and 2i the ttl ms of lease i, in pairs.
 * Returns one entry per lease: 1 extended, 0 another token holds the key, -2 nothing does, -1 the key holds
 * another type.
 */
export const EXTEND_MANY = luaScript(
  'extend-many',
  `${LEASE_LUA}
local outcomes = {}
for i = 1, #KEYS do
  -- pcall: a key of another type fails its own lease, not the rest of the batch
  local current = redis.pcall('GET', KEYS[i])
  if type(current) == 'table' and current.err then
    outcomes[i] = -1
  elseif not current then
    outcomes[i] = -2
  elseif ownership(current, ARGV[2 * i - 1]) == 0 then
    outcomes[i] = 0
  else
    outcomes[i] = redis.call('PEXPIRE', KEYS[i], ARGV[2 * i])
  end
end
return outcomes
`,
);
