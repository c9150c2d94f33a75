import { createHash } from 'node:crypto';
import type { LuaScript } from '../redis/scripts/lua-script.js';

/** A permit script with its SHA1, run by EVALSHA (as the mutex scripts of scripts.ts are). */
function script(name: string, lua: string): LuaScript {
  const body = `${PERMIT_LUA}\n${lua.trim()}`.trim();
  return { name, lua: body, sha: createHash('sha1').update(body).digest('hex') };
}

/**
 * Lua shared by every permit script. All of them take the same KEYS, on one Cluster slot (permit-keys.ts):
 * 1 permits: sorted set, token -> expiry (ms of the server clock); a permit whose expiry passed is ended
 * 2 info: hash; `shape` ('limit:N' or 'rw', kept while a permit or place exists), `writer` (the writing
 *   permit's token), `seq` (the line's counter), `p:<token>` (a permit: 'mode:fence:holder record', mode p
 *   for a semaphore permit, r or w) and `q:<token>` (a place: 'mode:until:reservedUntil:owner', until = the
 *   end of its wait in ms, reservedUntil = the end of the permit reserved for it, 0 while none is)
 * 3 line: sorted set, token -> arrival number: the waiting places in order
 * 4 fence: the resource's fence counter, shared with its mutex leases (scripts.ts)
 * 5 lock: the resource's mutex lease: while it exists, no permit is granted
 * Times come from the server's TIME, so that every expiry is of one clock.
 */
const PERMIT_LUA = `
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

/**
 * Grants a permit when the request fits beside the holders and every place before it in the line (a place
 * of its own, or behind the whole line when it has none); a retry of a live permit's token is answered as the
 * first time. A refused request that waits takes a place at the end of the line (or keeps its own).
 * ARGV: token, ttl ms, fencing ('1'/'0'), holder record ('' for none), shape ('limit:N' or 'rw'), mode ('p',
 * 'r' or 'w'), place ms (the rest of the wait; '0' takes no place), owner id, hand-off window ms, publish
 * command ('PUBLISH', 'SPUBLISH' or '' for none), channel.
 * Returns {1, fence or 0} on a grant, {0, ms until something holding it back ends or -1, places ahead or -1}
 * on a refusal, {2, shape in use} when the resource is in use with another shape.
 */
export const PERMIT_ACQUIRE = script(
  'permit-acquire',
  `
local token, ttl, fencing, holder = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local shape, mode, placeTtl, owner = ARGV[5], ARGV[6], tonumber(ARGV[7]), ARGV[8]
local window, publish, channel = tonumber(ARGV[9]), ARGV[10], ARGV[11]
prunePermits()
-- our own live permit: a retry whose first reply was lost; refresh it and answer as the first time
local own = redis.call('HGET', infoKey, 'p:' .. token)
if own and redis.call('ZSCORE', permitsKey, token) then
  local ownMode, ownFence = string.match(own, '^(%a):(%d+):')
  redis.call('ZADD', permitsKey, 'XX', text(now + ttl), token)
  if holder ~= '' then redis.call('HSET', infoKey, 'p:' .. token, ownMode .. ':' .. ownFence .. ':' .. holder) end
  keepAlive(liveLine())
  return {1, tonumber(ownFence)}
end
local places = liveLine()
local stored = redis.call('HGET', infoKey, 'shape')
-- the shape stays while a permit or a place exists: a caller that disagrees is told, never let in
if stored and stored ~= shape and (#places > 0 or redis.call('ZCARD', permitsKey) > 0) then return {2, stored} end
-- written with what this call keeps (a permit, a place): a resource with neither needs none
local newShape = {}
if stored ~= shape then newShape = { 'shape', shape } end
local position
for index, place in ipairs(places) do
  if place.token == token then position = index end
end
-- back after its reservation lapsed: it takes its turn again from its place
if position and places[position].lapsed then
  places[position].lapsed, places[position].reservedUntil = false, 0
  savePlace(places[position])
end
local limit = limitOf(shape)
local mutexTtl = redis.call('PTTL', lockKey)
local line = callLine(places, limit, window, function() return mutexTtl ~= -2 end)
notify(line, publish, channel, token)
local admitted
if position then
  admitted = line.fitting[token]
elseif mutexTtl == -2 and not line.stopped then
  local count, writer = line.count, line.writer
  if count == nil then count, writer = holders(limit) end
  admitted = fits(limit, mode, count, writer)
end
if admitted then
  if position then
    redis.call('ZREM', lineKey, token)
    redis.call('HDEL', infoKey, 'q:' .. token)
    places[position].gone = true
  end
  local fence = 0
  if fencing == '1' then fence = nextFence() end
  redis.call('ZADD', permitsKey, text(now + ttl), token)
  local record = mode .. ':' .. text(fence) .. ':' .. holder
  if mode == 'w' then
    redis.call('HSET', infoKey, 'p:' .. token, record, 'writer', token, unpack(newShape))
  else
    redis.call('HSET', infoKey, 'p:' .. token, record, unpack(newShape))
  end
  keepAlive(places)
  return {1, fence}
end
if position and placeTtl > 0 then
  places[position].untilMs = now + placeTtl
  savePlace(places[position])
elseif not position and placeTtl > 0 then
  local place = { token = token, mode = mode, untilMs = now + placeTtl, reservedUntil = 0, owner = owner }
  redis.call('ZADD', lineKey, redis.call('HINCRBY', infoKey, 'seq', 1), token)
  savePlace(place)
  if #newShape > 0 then redis.call('HSET', infoKey, unpack(newShape)) end
  places[#places + 1] = place
  position = #places
end
keepAlive(places)
-- how soon something holding it back ends by itself: a permit, a reservation, the mutex lease
local soonest = -1
local first = redis.call('ZRANGE', permitsKey, 0, 0, 'WITHSCORES')
if first[2] then soonest = tonumber(first[2]) - now end
for _, place in ipairs(places) do
  local left = place.reservedUntil - now
  if place.reservedUntil > 0 and not place.lapsed and (soonest < 0 or left < soonest) then soonest = left end
end
if mutexTtl >= 0 and (soonest < 0 or mutexTtl < soonest) then soonest = mutexTtl end
-- the places before ours that hold it back (lapsed ones do not)
local ahead = -1
if position then
  ahead = 0
  for index = 1, position - 1 do
    if not places[index].lapsed then ahead = ahead + 1 end
  end
end
return {0, soonest, ahead}
`,
);

/**
 * Ends the permit of a token and, in the same step, reserves freed permits for the line in its order and
 * tells the processes of the places reserved.
 * ARGV: token, hand-off window ms, publish command ('PUBLISH', 'SPUBLISH' or ''), channel.
 * Returns 1 when the token held a live permit, 0 otherwise.
 */
export const PERMIT_RELEASE = script(
  'permit-release',
  `
local token, window, publish, channel = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
prunePermits()
local limit = limitOf(redis.call('HGET', infoKey, 'shape'))
local released = redis.call('ZREM', permitsKey, token)
if released == 1 then
  redis.call('HDEL', infoKey, 'p:' .. token)
  if not limit and redis.call('HGET', infoKey, 'writer') == token then redis.call('HDEL', infoKey, 'writer') end
end
-- called even when the permit had ended: its end (or another's, pruned above) may free the line's first
local places = liveLine()
notify(callLine(places, limit, window, mutexHeld), publish, channel, '')
keepAlive(places)
return released
`,
);

/**
 * Gives up a waiting place; the places it held back are called in the same step.
 * ARGV: token, hand-off window ms, publish command ('PUBLISH', 'SPUBLISH' or ''), channel. Returns 1.
 */
export const PERMIT_LEAVE_LINE = script(
  'permit-leave-line',
  `
local token, window, publish, channel = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
prunePermits()
redis.call('ZREM', lineKey, token)
redis.call('HDEL', infoKey, 'q:' .. token)
local places = liveLine()
notify(callLine(places, limitOf(redis.call('HGET', infoKey, 'shape')), window, mutexHeld), publish, channel, '')
keepAlive(places)
return 1
`,
);

/**
 * Sets a live permit to a new length; an ended one stays ended. The resource's keys are never shortened here
 * (another permit or place may need them longer).
 * ARGV: token, ttl ms. Returns 1 when extended, 0 when the token holds no live permit.
 */
export const PERMIT_EXTEND = script(
  'permit-extend',
  `
local token, ttl = ARGV[1], tonumber(ARGV[2])
local expires = redis.call('ZSCORE', permitsKey, token)
if not expires or tonumber(expires) <= now then return 0 end
redis.call('ZADD', permitsKey, 'XX', text(now + ttl), token)
for _, key in ipairs({ permitsKey, infoKey }) do
  if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
end
return 1
`,
);

/**
 * Reads a resource's permits without changing anything (ended ones are left for the next write to prune).
 * ARGV: none. Returns {shape or '', fence counter or '', live places, then per live permit, soonest end
 * first: mode, remaining ms, fence (0 for none), holder record ('' for none)}.
 */
export const PERMIT_INSPECT = script(
  'permit-inspect',
  `
local waiting = 0
for _, token in ipairs(redis.call('ZRANGE', lineKey, 0, -1)) do
  local place = placeOf(token)
  if place and not place.lapsed then waiting = waiting + 1 end
end
local reply = { redis.call('HGET', infoKey, 'shape') or '', redis.call('GET', fenceKey) or '', waiting }
local live = redis.call('ZRANGEBYSCORE', permitsKey, '(' .. text(now), '+inf', 'WITHSCORES')
for i = 1, #live, 2 do
  local record = redis.call('HGET', infoKey, 'p:' .. live[i]) or ''
  local mode, fence, holder = string.match(record, '^(%a):(%d+):(.*)$')
  reply[#reply + 1] = mode or ''
  reply[#reply + 1] = tonumber(live[i + 1]) - now
  reply[#reply + 1] = fence or '0'
  reply[#reply + 1] = holder or ''
end
return reply
`,
);

/** Every permit script, for loading them at startup. */
export const PERMIT_SCRIPTS: readonly LuaScript[] = [
  PERMIT_ACQUIRE,
  PERMIT_RELEASE,
  PERMIT_LEAVE_LINE,
  PERMIT_EXTEND,
  PERMIT_INSPECT,
];
