/**
 * Lua that reads and writes a resource's whole permit state: one string value at the permit key
 * (permit-keys.ts), read with one GET and written with one SET (or DEL) per script, so that each step of a
 * grant is not a command of its own. Shared by the permit scripts (permit.lua.ts) and the operator's revoke
 * (../../scripts/revoke.script.ts).
 *
 * The value is MessagePack (`cmsgpack`, in the Lua of Redis 7 and Valkey): it keeps the holder records and
 * offers as they are, whatever bytes they hold, and numbers exactly (the JSON of `cjson` prints 14 digits). It
 * is an array: 1 shape ('limit:N' or 'rw'); 2 the writing permit's token ('' for none); 3 the permits, each
 * {token, expiry in ms of the server clock, mode ('p' for a semaphore permit, 'r' or 'w'), fence (0 for
 * none), holder record ('' for none)}; 4 the waiting places in order of arrival, each {token, mode, until (the
 * end of its wait in ms), reservedUntil (the end of the permit reserved for it, 0 while none is), owner (the
 * owner id of its waiter's process), answered (a request came from that process after its reservation was
 * made, see passOverGone), offer ('version ttl fencing holder' when its process hears notices: the permit a
 * release grants it directly, '' for none), listening (its process heard its own channel when it left the offer:
 * a grant's notice that then reaches nobody means it is gone; absent in what an earlier version wrote)}.
 * The value expires with its last permit or place, and is deleted when a script leaves neither.
 * An earlier version kept this state in a hash at the same name and two sorted sets beside it: its scripts
 * and these meet WRONGTYPE on each other's value, never an empty state (permit-wrong-type.ts names it).
 */
export const PERMIT_STATE_LUA = `
-- a place of the line, or nil once its wait ended. A place whose reservation passed unclaimed has lapsed: it
-- holds nobody back (a waiter that is gone costs at most one window) but keeps its turn, should its waiter
-- come back late (a stalled process), until its wait ends
local function placeFrom(record, now)
  if record[3] <= now then return nil end
  local place = { token = record[1], mode = record[2], untilMs = record[3], reservedUntil = record[4],
    owner = record[5], answered = record[6] }
  if record[7] ~= '' then place.offerText = record[7] end
  place.listening = record[8] == true
  place.lapsed = place.reservedUntil > 0 and place.reservedUntil <= now
  return place
end

-- The resource's permit state, read with one GET: shape and writer (nil when none), its live permits and the
-- live places of its line, in order. Permits whose lease ran out (a holder that crashed, or forgot) and places
-- whose wait ended are left out, and the state marked changed, so that the next write drops them.
local function readPermitState(key, now)
  local resource = { permits = {}, places = {}, changed = false, stored = false }
  local raw = redis.call('GET', key)
  if not raw then return resource end
  resource.stored = true
  local value = cmsgpack.unpack(raw)
  resource.shape = value[1]
  for _, record in ipairs(value[3]) do
    if record[2] > now then
      resource.permits[#resource.permits + 1] = { token = record[1], expires = record[2], mode = record[3],
        fence = record[4], holder = record[5] }
      if record[1] == value[2] then resource.writer = value[2] end
    else
      resource.changed = true
    end
  end
  for _, record in ipairs(value[4]) do
    local place = placeFrom(record, now)
    if place then
      resource.places[#resource.places + 1] = place
    else
      resource.changed = true
    end
  end
  return resource
end

-- Writes the state back when it changed, in one command: SET with the expiry of its last permit or place (it
-- holds nothing past them), or DEL when none is left. Places that left the line (place.left) are dropped here.
local function writePermitState(key, resource)
  if not resource.changed then return end
  local permits, places, ends = {}, {}, 0
  for _, permit in ipairs(resource.permits) do
    permits[#permits + 1] = { permit.token, permit.expires, permit.mode, permit.fence, permit.holder }
    ends = math.max(ends, permit.expires)
  end
  for _, place in ipairs(resource.places) do
    if not place.left then
      places[#places + 1] = { place.token, place.mode, place.untilMs, place.reservedUntil, place.owner,
        place.answered == true, place.offerText or '', place.listening == true }
      ends = math.max(ends, place.untilMs)
    end
  end
  if #permits == 0 and #places == 0 then
    if resource.stored then redis.call('DEL', key) end
    return
  end
  local value = cmsgpack.pack({ resource.shape, resource.writer or '', permits, places })
  redis.call('SET', key, value, 'PXAT', string.format('%.0f', ends))
end
`;
