/**
 * Lua shared by every script that reads a lease. A lease's value is its token, then, when the grant came with
 * a holder record, a newline and the record: one key per lease, so a grant is one SET and a release one DEL,
 * and the plain SET NX PX that grants a free key uncontended writes the whole lease. A waiter that was refused
 * marks the lease with a leading '!' (see ACQUIRE): only the release of a marked lease looks at the key's
 * line and sends a notice; nobody waits for an unmarked one. '>owner' and '~owner' are hand-off
 * reservations, never leases (tokens are hex: no lease starts with '!', '>' or '~'). The TypeScript side of
 * these marks is line/line-protocol.ts.
 */
export const LEASE_LUA = `
-- 1 when the token holds the lease unmarked, 2 when it holds it marked by a waiter, 0 when it does not
local function ownership(value, token)
  if not value then return 0 end
  local start = 1
  if string.byte(value, 1) == 33 then start = 2 end
  if string.sub(value, start, start + #token - 1) ~= token then return 0 end
  local after = string.byte(value, start + #token)
  if after ~= nil and after ~= 10 then return 0 end
  return start
end

local function leaseValue(token, holder)
  if holder == '' then return token end
  return token .. '\\n' .. holder
end
`;
