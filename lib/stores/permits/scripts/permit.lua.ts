/**
 * Lua shared by every permit script. All of them take the same KEYS, on one Cluster slot (permit-keys.ts):
 * 1 permits: sorted set, token -> expiry (ms of the server clock); a permit whose expiry passed is ended
 * 2 info: hash; `shape` ('limit:N' or 'rw', kept while a permit or place exists), `writer` (the writing
 *   permit's token), `seq` (the line's counter), `p:<token>` (a permit: 'mode:fence:holder record', mode p
 *   for a semaphore permit, r or w) and `q:<token>` (a place: 'mode:until:reservedUntil:owner', until = the
 *   end of its wait in ms, reservedUntil = the end of the permit reserved for it, 0 while none is)
 * 3 line: sorted set, token -> arrival number: the waiting places in order
 * 4 fence: the resource's fence counter, shared with its mutex leases (redis/scripts/grant.lua.ts)
 * 5 lock: the resource's mutex lease: while it exists, no permit is granted
 * Times come from the server's TIME, so that every expiry is of one clock.
 */
export const PERMIT_LUA = `
local permitsKey, infoKey, lineKey, fenceKey, lockKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local clock = redis.call('TIME')
local nowUs = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local now = math.floor(nowUs / 1000)

-- whole digits: a number passed to Redis as such would reach it in whatever notation Lua prints it
local function text(number)
  return string.format('%.0f', number)
end

-- nil for 'rw': a readers-writer resource
local function limitOf(shape)
  if not shape or shape == 'rw' then return nil end
  return tonumber(string.sub(shape, 7))
end

-- permits whose lease ran out (a holder that crashed, or forgot): gone, with their records
local function prunePermits()
  local ended = redis.call('ZRANGEBYSCORE', permitsKey, '-inf', now)
  if #ended == 0 then return end
  local writer = redis.call('HGET', infoKey, 'writer')
  for _, token in ipairs(ended) do
    redis.call('HDEL', infoKey, 'p:' .. token)
    if token == writer then redis.call('HDEL', infoKey, 'writer') end
  end
  redis.call('ZREMRANGEBYSCORE', permitsKey, '-inf', now)
end

-- a place of the line, or nil once its wait ended. A place whose reservation passed unclaimed has lapsed: it
-- holds nobody back (a waiter that is gone costs at most one window) but keeps its turn, should its waiter
-- come back late (a stalled process), until its wait ends
local function placeOf(token)
  local record = redis.call('HGET', infoKey, 'q:' .. token)
  if not record then return nil end
  local mode, untilMs, reservedUntil, owner = string.match(record, '^(%a):(%d+):(%d+):(.*)$')
  if not mode or tonumber(untilMs) <= now then return nil end
  local place = { token = token, mode = mode, untilMs = tonumber(untilMs), reservedUntil = tonumber(reservedUntil), owner = owner }
  place.lapsed = place.reservedUntil > 0 and place.reservedUntil <= now
  return place
end

local function savePlace(place)
  redis.call('HSET', infoKey, 'q:' .. place.token,
    place.mode .. ':' .. text(place.untilMs) .. ':' .. text(place.reservedUntil) .. ':' .. place.owner)
end

-- the places in order; those whose wait ended leave the line
local function liveLine()
  local places = {}
  for _, token in ipairs(redis.call('ZRANGE', lineKey, 0, -1)) do
    local place = placeOf(token)
    if place then
      places[#places + 1] = place
    else
      redis.call('ZREM', lineKey, token)
      redis.call('HDEL', infoKey, 'q:' .. token)
    end
  end
  return places
end

-- whether one more permit of mode fits beside count permits (a writer among them when writer is true)
local function fits(limit, mode, count, writer)
  if limit then return count < limit end
  if mode == 'w' then return count == 0 end
  return not writer
end

-- the permits held, and whether the writer is among them (only a readers-writer resource has one)
local function holders(limit)
  local count = redis.call('ZCARD', permitsKey)
  if limit then return count, false end
  return count, redis.call('HEXISTS', infoKey, 'writer') == 1
end

-- Walks the line in order: each place that fits beside the holders and the places before it has a permit
-- reserved (one reserved now gets the hand-off window to claim it); the first place that does not fit holds
-- back everyone behind it, so nobody overtakes a waiter. Lapsed places are passed over. exclusive(): whether
-- a mutex lease holds the key, asked only when someone waits. line.count is nil when the line is empty.
local function callLine(places, limit, window, exclusive)
  local line = { fitting = {}, reserved = {}, stopped = false }
  if #places == 0 then return line end
  local count, writer = holders(limit)
  line.stopped = exclusive()
  for _, place in ipairs(places) do
    if place.lapsed then
      -- holds nobody back
    elseif not line.stopped and fits(limit, place.mode, count, writer) then
      count = count + 1
      writer = writer or place.mode == 'w'
      line.fitting[place.token] = true
      if place.reservedUntil == 0 then
        place.reservedUntil = now + window
        savePlace(place)
        line.reserved[#line.reserved + 1] = place
      end
    else
      line.stopped = true
      -- reserved before, it no longer fits (a late waiter came back to an earlier place): it waits again
      if place.reservedUntil > 0 then
        place.reservedUntil = 0
        savePlace(place)
      end
    end
  end
  line.count, line.writer = count, writer
  return line
end

local function mutexHeld()
  return redis.call('EXISTS', lockKey) == 1
end

-- one notice per process whose place was reserved now, naming it (its store's owner id): only it wakes
local function notify(line, publish, channel, except)
  if publish == '' then return end
  local told = {}
  for _, place in ipairs(line.reserved) do
    if place.token ~= except and not told[place.owner] then
      told[place.owner] = true
      -- pcall: a user whose ACL refuses the channel still gets its permit; its waiters fall back to their timers
      redis.pcall(publish, channel, place.owner)
    end
  end
end

-- the resource's keys live exactly as long as its last permit or place, and its shape with them
local function keepAlive(places)
  local last, waiting = 0, false
  local top = redis.call('ZRANGE', permitsKey, -1, -1, 'WITHSCORES')
  if top[2] then last = tonumber(top[2]) end
  for _, place in ipairs(places) do
    if not place.gone then
      waiting = true
      if place.untilMs > last then last = place.untilMs end
    end
  end
  if last <= now then
    redis.call('DEL', permitsKey, infoKey, lineKey)
    return
  end
  redis.call('PEXPIREAT', infoKey, text(last))
  if top[2] then redis.call('PEXPIREAT', permitsKey, text(last)) end
  if waiting then redis.call('PEXPIREAT', lineKey, text(last)) end
end

-- one above the counter and never below the server clock in microseconds: the mutex's rule (scripts.ts)
local function nextFence()
  local fence = redis.call('INCR', fenceKey)
  if fence < nowUs then
    fence = nowUs
    redis.call('SET', fenceKey, text(fence))
  end
  return fence
end
`;
