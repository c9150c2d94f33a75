/**
 * Lua shared by every script that grants a fence: the resource's mutex leases (grant.lua.ts) and its permits
 * (../permits/scripts/permit.lua.ts) draw from one counter, so a fence orders every grant of the resource.
 *
 * The fence is one above the resource's counter and never below the server clock in microseconds. The
 * clock is a floor on every grant, not only a seed for a missing counter: a counter can come back older
 * than fences already granted (a replica promoted before it received the last grants, a restore from an
 * old snapshot) and must not hand those out again. No fence is above the clock, at its grant, of the
 * fastest server the counter lived on (two grants of one resource are more than a microsecond apart), so
 * the first fence of a promoted replica is above every fence the old master granted once the failover took
 * longer than the servers' clocks differ. The counter has no expiry: it must keep growing across every
 * grant of this resource.
 */
export const FENCE_LUA = `
-- the resource's next fence, or an error reply when its counter is not ours (call it before writing anything)
local function nextFence(fenceKey)
  local now = redis.call('TIME')
  local clock = tonumber(now[1]) * 1000000 + tonumber(now[2])
  -- the clock is almost always ahead of the counter (one step per grant, a million per second): write it and
  -- read the counter in one command; SET GET refuses a key of another type before it writes anything
  local previous = redis.pcall('SET', fenceKey, string.format('%.0f', clock), 'GET')
  if type(previous) == 'table' and previous.err then return previous end
  local counter = 0
  if previous then
    counter = tonumber(previous)
    if not counter then
      -- not ours: put it back and fail rather than lose what another part of the application keeps there
      redis.call('SET', fenceKey, previous)
      return redis.error_reply('WRONGTYPE the fence counter holds no integer')
    end
  end
  if counter >= clock then
    clock = counter + 1
    redis.call('SET', fenceKey, string.format('%.0f', clock))
  end
  return clock
end
`;
