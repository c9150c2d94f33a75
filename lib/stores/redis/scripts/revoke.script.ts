import { FENCE_LUA } from './fence.lua.js';
import { luaScript } from './lua-script.js';
import { PERMIT_STATE_LUA } from '../permits/scripts/permit-state.lua.js';

/**
 * An operator's forced release: ends the mutex lease and every permit of a resource whoever holds them, raises
 * its fence (fence.lua.ts) so that the old holders' fenced writes are refused, remembers the ended tokens so
 * that their holders hear `revoked` when their renewal fails, and tells the waiters.
 *
 * KEYS: 1 lock, 2 fence, 3 permit state (../permits/permit-keys.ts), 4 revoked.
 * ARGV: 1 channel; 2 publish command ('PUBLISH', 'SPUBLISH' or '' for none); 3 how long past the longest ended
 * lease, in ms, the ended tokens are remembered.
 * Returns { how many leases and permits it ended, the fence after it }.
 */
export const REVOKE = luaScript(
  'revoke',
  `${FENCE_LUA}${PERMIT_STATE_LUA}
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
-- the permits first: a state this version cannot read fails the script before anything is written
local resource = readPermitState(KEYS[3], now)
local fence = nextFence(KEYS[2])
if type(fence) == 'table' then return fence end
local tokens = {}
local longest = 0
-- the mutex lease: its token before the holder record, after a waiter's mark; not a reservation, not the guard
local value = redis.call('GET', KEYS[1])
if value then
  local first = string.sub(value, 1, 1)
  local body = value
  if first == '!' then body = string.sub(value, 2) end
  if first ~= '>' and first ~= '~' and body ~= '#' then
    table.insert(tokens, string.match(body, '^[^\\n]*'))
    longest = math.max(longest, redis.call('PTTL', KEYS[1]))
  end
  redis.call('DEL', KEYS[1])
end
-- the live permits, with their records; the waiting places stay in the line
for _, permit in ipairs(resource.permits) do
  table.insert(tokens, permit.token)
  longest = math.max(longest, permit.expires - now)
end
if #resource.permits > 0 then resource.changed = true end
resource.permits, resource.writer = {}, nil
writePermitState(KEYS[3], resource)
if #tokens > 0 then
  for _, token in ipairs(tokens) do redis.call('HSET', KEYS[4], token, '1') end
  redis.call('PEXPIRE', KEYS[4], longest + tonumber(ARGV[3]))
end
-- every waiter asks again: the key is free
if ARGV[2] ~= '' then redis.call(ARGV[2], ARGV[1], '*') end
return { #tokens, fence }
`,
);
