import { FENCE_LUA } from './fence.lua.js';

/** Lua shared by the scripts that grant a lease: writes the lease and its fence (fence.lua.ts). */
export const GRANT_LUA = `${FENCE_LUA}
-- marked: others wait for the key, so this lease's release must look at the line
local function grant(lockKey, fenceKey, value, ttl, fencing, marked)
  local fence = 0
  if fencing == '1' then
    fence = nextFence(fenceKey)
    if type(fence) == 'table' then return fence end
  end
  if marked then value = '!' .. value end
  redis.call('SET', lockKey, value, 'PX', ttl)
  return fence
end
`;
