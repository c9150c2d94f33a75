import { luaScript } from './lua-script.js';

/**
 * Raises a fence counter to at least a value, never lowering it: how a store over several nodes brings
 * the counters of a quorum up to the fence it granted (see RedlockStore).
 *
 * KEYS: 1 fence.
 * ARGV: 1 fence.
 * Returns the counter after the call.
 */
export const RAISE_FENCE = luaScript(
  'raise-fence',
  `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local target = tonumber(ARGV[1])
-- a maximum, not an assignment: a late or repeated call can never move the counter back
if current >= target then return current end
redis.call('SET', KEYS[1], ARGV[1])
return target
`,
);
