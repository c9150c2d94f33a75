/**
 * Lua shared by the scripts that read or change a key's line of waiting processes. An entry is the owner id of a
 * process, then, when it left one, a space and its offer ('owner version token ttl fencing holder', see
 * line-protocol.ts): the order and the terms of the line in one list, so that a release reads both with one LPOP.
 * A process stands in a line once; the entries of a process are found by their owner id.
 */
export const LINE_ENTRIES_LUA = `
-- the owner id an entry starts with
local function entryOwner(entry)
  return string.match(entry, '^(%x+)')
end

-- the first entry of owner in the line and its index (from 0), or nil
local function placeOf(line, owner)
  for index, entry in ipairs(redis.call('LRANGE', line, 0, -1)) do
    if entryOwner(entry) == owner then return entry, index - 1 end
  end
  return nil
end

-- owner leaves the line: every entry of it goes
local function leaveLine(line, owner)
  for _, entry in ipairs(redis.call('LRANGE', line, 0, -1)) do
    if entryOwner(entry) == owner then redis.call('LREM', line, 0, entry) end
  end
end
`;
