/**
 * Lua shared by every permit script. All of them take the same KEYS, on one Cluster slot (permit-keys.ts):
 * 1 permits: sorted set, token -> expiry (ms of the server clock); a permit whose expiry passed is ended
 * 2 info: hash; `shape` ('limit:N' or 'rw', kept while a permit or place exists), `writer` (the writing
 *   permit's token), `p:<token>` (a permit: 'mode:fence:holder record', mode p
 *   for a semaphore permit, r or w) and `q:<token>` (a place: 'mode:until:reservedUntil:owner', until = the
 *   end of its wait in ms, reservedUntil = the end of the permit reserved for it, 0 while none is, owner = the
 *   owner id of its waiter's process; then ':1' while its reservation is answered: a request came from that
 *   process after the reservation was made, see passOverGone) and `o:<token>` (the offer its waiter left, when
 *   its process hears notices: 'version ttl fencing holder record', the permit a release grants it directly)
 * 3 line: sorted set, token -> arrival number (above the last place's, at least the server clock in µs): the
 *   waiting places in order
 * 4 fence: the resource's fence counter, shared with its mutex leases (../../scripts/fence.lua.ts)
 * 5 lock: the resource's mutex lease: while it exists, no permit is granted; while permits live, their guard
 *   (see GUARD below)
 * 6 mutexLine: the mutex's line of waiting processes (entries that start with an owner id, see
 *   ../../line/line-entries.lua.ts), whose own channels hear the guard's end
 * Times come from the server's TIME, so that every expiry is of one clock. The three keys share one expiry,
 * info's, at least as late as every permit and place (see keepKeys); a write that needs them longer pushes it.
 */
export const PERMIT_LUA = `
local permitsKey, infoKey, lineKey, fenceKey, lockKey, mutexLineKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local clock = redis.call('TIME')
local nowUs = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local now = math.floor(nowUs / 1000)
-- what the script read of the resource, read once (readResource): its shape, its writer's token, the caller's record
local state = {}

-- whole digits: a number passed to Redis as such would reach it in whatever notation Lua prints it
local function text(number)
  return string.format('%.0f', number)
end

-- nil for 'rw': a readers-writer resource
local function limitOf(shape)
  if not shape or shape == 'rw' then return nil end
  return tonumber(string.sub(shape, 7))
end

-- the shape, the writer and token's permit record in one read (each nil when missing)
local function readResource(token)
  local fields = redis.call('HMGET', infoKey, 'shape', 'writer', 'p:' .. token)
  state.token, state.shape, state.writer, state.own = token, fields[1] or nil, fields[2] or nil, fields[3] or nil
end

-- permits whose lease ran out (a holder that crashed, or forgot): gone, with their records (after readResource).
-- The permit that ends first is read first: while it lives, none has ended, and state.firstEnd keeps its end
-- (false with no permit) for the script's answer; after a prune it is read again when asked (soonestPermitEnd)
local function prunePermits()
  local first = redis.call('ZRANGE', permitsKey, 0, 0, 'WITHSCORES')
  if not first[2] or tonumber(first[2]) > now then
    state.firstEnd = first[2] and tonumber(first[2]) or false
    return
  end
  local ended = redis.call('ZRANGEBYSCORE', permitsKey, '-inf', now)
  local fields = {}
  for _, token in ipairs(ended) do
    fields[#fields + 1] = 'p:' .. token
    if token == state.writer then
      fields[#fields + 1] = 'writer'
      state.writer = nil
    end
    if token == state.token then state.own = nil end
    if #fields >= 100 then
      redis.call('HDEL', infoKey, unpack(fields))
      fields = {}
    end
  end
  if #fields > 0 then redis.call('HDEL', infoKey, unpack(fields)) end
  redis.call('ZREMRANGEBYSCORE', permitsKey, '-inf', now)
end

-- when the first of the live permits ends (ms of the server clock), nil with none; after prunePermits, as long
-- as no permit was written since
local function soonestPermitEnd()
  if state.firstEnd == nil then
    local first = redis.call('ZRANGE', permitsKey, 0, 0, 'WITHSCORES')
    state.firstEnd = first[2] and tonumber(first[2]) or false
  end
  return state.firstEnd or nil
end

-- a place of the line, or nil once its wait ended. A place whose reservation passed unclaimed has lapsed: it
-- holds nobody back (a waiter that is gone costs at most one window) but keeps its turn, should its waiter
-- come back late (a stalled process), until its wait ends
local function placeFrom(token, record, offer)
  if not record then return nil end
  local mode, untilMs, reservedUntil, owner, answered = string.match(record, '^(%a):(%d+):(%d+):([^:]*):?(1?)$')
  if not mode or tonumber(untilMs) <= now then return nil end
  local place = { token = token, mode = mode, untilMs = tonumber(untilMs), reservedUntil = tonumber(reservedUntil), owner = owner }
  place.lapsed = place.reservedUntil > 0 and place.reservedUntil <= now
  place.answered = answered == '1'
  place.offerText = offer
  return place
end

-- the permit a place's offer asks for ('version ttl fencing holder'), nil for a place without one
local function offerOf(place)
  if not place.offerText then return nil end
  local version, ttl, fencing, holder = string.match(place.offerText, '^(%d+) (%d+) ([01]) ?(.*)$')
  if not version then return nil end
  return { version = version, ttl = tonumber(ttl), fencing = fencing, holder = holder }
end

-- the place's record, with its offer when it has one, in one write
local function savePlace(place)
  -- a place without a reservation has none for its process to answer
  place.answered = place.answered and place.reservedUntil > 0
  local answered = ''
  if place.answered then answered = ':1' end
  local record = place.mode .. ':' .. text(place.untilMs) .. ':' .. text(place.reservedUntil) .. ':' .. place.owner .. answered
  if place.offerText then
    redis.call('HSET', infoKey, 'q:' .. place.token, record, 'o:' .. place.token, place.offerText)
  else
    redis.call('HSET', infoKey, 'q:' .. place.token, record)
  end
end

-- a place leaves the line, with its offer
local function dropPlace(token)
  redis.call('ZREM', lineKey, token)
  redis.call('HDEL', infoKey, 'q:' .. token, 'o:' .. token)
end

-- token's permit ends, with its record (and the writer's field when it was the writer): 1 when it held one
local function dropPermit(token)
  local removed = redis.call('ZREM', permitsKey, token)
  if removed == 0 then return 0 end
  if state.writer == token then
    redis.call('HDEL', infoKey, 'p:' .. token, 'writer')
    state.writer = nil
  else
    redis.call('HDEL', infoKey, 'p:' .. token)
  end
  return 1
end

-- the places of the line in order, nil where a place's wait ended: their records and offers read in batches
-- (one HMGET per batch, not one HGET per place)
local function readLine()
  local scored = redis.call('ZRANGE', lineKey, 0, -1, 'WITHSCORES')
  local tokens = {}
  for index = 1, #scored, 2 do tokens[#tokens + 1] = scored[index] end
  -- the last place's arrival number, for the next place's (see nextArrival)
  if #scored > 0 then state.lastArrival = tonumber(scored[#scored]) end
  local places = {}
  for first = 1, #tokens, 50 do
    local fields = {}
    for index = first, math.min(first + 49, #tokens) do
      fields[#fields + 1] = 'q:' .. tokens[index]
      fields[#fields + 1] = 'o:' .. tokens[index]
    end
    local records = redis.call('HMGET', infoKey, unpack(fields))
    for offset = 1, #records, 2 do
      local index = first + (offset - 1) / 2
      places[index] = placeFrom(tokens[index], records[offset] or nil, records[offset + 1] or nil)
    end
  end
  return tokens, places
end

-- the arrival number of a new place (after readLine): after the line's last, and else the server clock in µs,
-- so that no counter need be kept or read
local function nextArrival()
  return math.max(nowUs, (state.lastArrival or 0) + 1)
end

-- the places in order; those whose wait ended leave the line
local function liveLine()
  local tokens, read = readLine()
  local places = {}
  for index, token in ipairs(tokens) do
    if read[index] then
      places[#places + 1] = read[index]
    else
      dropPlace(token)
    end
  end
  return places
end

-- A request from a process shows that it is alive: the reservations of its other places, lapsed or not, are
-- answered, so that one late waiter of a live process costs only its own turn (see passOverGone).
local function answerReservations(places, owner, token)
  for _, place in ipairs(places) do
    if place.owner == owner and place.token ~= token and place.reservedUntil > 0 and not place.answered then
      place.answered = true
      savePlace(place)
    end
  end
end

-- A process with a reservation that lapsed unanswered (nothing came from it since the reservation was made) is
-- presumed gone: it crashed while it waited. Every place of it without a reservation of its own is passed over
-- with it, so that all the waiters of a dead process cost the others one hand-off window, not one each. Each
-- keeps its turn: the process's next request answers the lapsed reservation and brings them all back. Nothing
-- is written: the places lapse for this call only.
local function passOverGone(places)
  local gone = {}
  for _, place in ipairs(places) do
    if place.lapsed and not place.answered then gone[place.owner] = true end
  end
  if next(gone) == nil then return end
  for _, place in ipairs(places) do
    if gone[place.owner] and place.reservedUntil == 0 then place.lapsed = true end
  end
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
  return count, state.writer ~= nil
end

-- While permits live, the lock key holds their guard '#' (tokens are hex: no lease starts with it), as long as
-- the longest of them: the mutex's plain SET NX is refused beside permits, as permits are beside a mutex lease.
-- A mutex caller that waits marks it '!#', as it marks a lease: from then on no permit is granted, so permits
-- that keep overlapping cannot starve the mutex, and the end of the last one reserves the key for the mutex
-- ('~permits': anyone's but a permit's, see ACQUIRE) for the hand-off window and tells its waiters.
local GUARD, MARKED_GUARD = '#', '!#'

-- the lock key's value, read once per script and kept up to date by the script's own writes
local lockRead, lockValue = false, nil
local function currentLock()
  if not lockRead then lockRead, lockValue = true, redis.call('GET', lockKey) or nil end
  return lockValue
end
local function setLock(value, ttl)
  redis.call('SET', lockKey, value, 'PX', text(ttl))
  lockRead, lockValue = true, value
end

-- the remaining ms of what holds the key against permits (a mutex lease or reservation, the marked guard);
-- -2 when nothing does
local function mutexHoldTtl()
  local value = currentLock()
  if not value or value == GUARD then return -2 end
  return redis.call('PTTL', lockKey)
end

local function mutexHeld()
  return mutexHoldTtl() ~= -2
end

-- a permit that ends in ttl ms is granted or extended: the guard lasts at least as long (see GUARD)
local function coverPermit(ttl)
  local value = currentLock()
  if not value then
    setLock(GUARD, ttl)
  elseif value == GUARD or value == MARKED_GUARD then
    -- GT: only ever later, in one command (a longer guard stays as it is)
    redis.call('PEXPIRE', lockKey, text(ttl), 'GT')
  end
end

-- the last permit ended: the guard goes; a marked one reserves the key for the mutex and tells its waiters
local function endGuard(publish, channel, window)
  local value = currentLock()
  if value == GUARD then
    redis.call('DEL', lockKey)
  elseif value == MARKED_GUARD then
    setLock('~permits', math.max(window, 1))
    -- pcall: a user whose ACL refuses the channel still releases; the mutex waiters fall back to their backoff
    if publish ~= '' then
      redis.pcall(publish, channel, '*')
      -- a mutex waiter that left an offer listens on its process's own channel only: the first few are told
      for _, entry in ipairs(redis.call('LRANGE', mutexLineKey, 0, 7)) do
        local owner = string.match(entry, '^(%x+)')
        if owner then redis.pcall(publish, channel .. ':' .. owner, '*') end
      end
    end
  end
end

-- the permit that ended last is gone while others live: the guard shrinks to the longest of them
local function shrinkGuard()
  local value = currentLock()
  if value ~= GUARD and value ~= MARKED_GUARD then return end
  local top = redis.call('ZRANGE', permitsKey, -1, -1, 'WITHSCORES')
  if top[2] and tonumber(top[2]) > now then setLock(value, tonumber(top[2]) - now) end
end

-- a refused caller that waits marks the mutex lease (keeping its expiry), so that its release tells the line
local function markMutexLease(ttl)
  local value = currentLock()
  if not value or ttl <= 0 then return end
  local mark = string.sub(value, 1, 1)
  if mark ~= '!' and mark ~= '>' and mark ~= '~' and value ~= GUARD then setLock('!' .. value, ttl) end
end

-- One notice per process whose places were reserved now, naming it (its store's owner id) and how many of its
-- places were ('owner:count'): only it wakes, and only that many of its waiters, the longest waiting first. The
-- notice also names the process of the first place still held back, which looks again once the window is over,
-- should the reserved one never come (gone while waiting: see passOverGone). caller: the token and owner id of
-- the request that called the line ('' for none), whose own reservation needs no notice and whose process needs
-- no second look.
local function notify(line, places, publish, channel, callerToken, callerOwner)
  if publish == '' then return end
  local told, owners = {}, {}
  for _, place in ipairs(line.reserved) do
    if place.token ~= callerToken then
      if not told[place.owner] then
        told[place.owner] = 0
        owners[#owners + 1] = place.owner
      end
      told[place.owner] = told[place.owner] + 1
    end
  end
  if #owners == 0 then return end
  local after = ''
  for _, place in ipairs(places) do
    if not place.lapsed and not line.fitting[place.token] and not told[place.owner] and place.owner ~= callerOwner then
      after = ' ' .. place.owner
      break
    end
  end
  for _, owner in ipairs(owners) do
    -- pcall: a user whose ACL refuses the channel still gets its permit; its waiters fall back to their timers
    redis.pcall(publish, channel, owner .. ':' .. told[owner] .. after)
  end
end

-- The keys live at least until untilMs: info's expiry, which they share, is read and, when too early, pushed to
-- twice as far as needed (at most a minute more), so that the next calls of a busy resource need not push it
-- again. fresh: keys this call created, which take the shared expiry. Keys live at most that much longer than
-- their last permit or place; a release that leaves nothing deletes them at once.
local function keepKeys(untilMs, fresh)
  local left = redis.call('PTTL', infoKey)
  if left >= 0 and now + left >= untilMs then
    for _, key in ipairs(fresh) do redis.call('PEXPIREAT', key, text(now + left)) end
    return
  end
  local at = text(untilMs + math.min(untilMs - now, 60000))
  for _, key in ipairs({ infoKey, permitsKey, lineKey }) do redis.call('PEXPIREAT', key, at) end
end

-- Grants the permit a place's offer asks for, in this step, and tells its process on its own channel
-- ('=version fence', line-protocol.ts), so its waiter holds it without another request: 'granted'; 'gone',
-- undone, when nobody listens there (its process is gone; the place leaves the line); nil when no fence can
-- be drawn (the waiter's own request will say why). A place of the calling process (direct.owner) is told in
-- the script's reply instead (direct.told: version, fence, ...). heldBefore: the permits held before this one.
local function grantPlace(place, offer, direct, heldBefore)
  local fence = 0
  if offer.fencing == '1' then
    fence = nextFence(fenceKey)
    if type(fence) == 'table' then return nil end
  end
  local tokenField = 'p:' .. place.token
  redis.call('ZADD', permitsKey, text(now + offer.ttl), place.token)
  if place.mode == 'w' then
    redis.call('HSET', infoKey, tokenField, place.mode .. ':' .. text(fence) .. ':' .. offer.holder, 'writer', place.token)
  else
    redis.call('HSET', infoKey, tokenField, place.mode .. ':' .. text(fence) .. ':' .. offer.holder)
  end
  dropPlace(place.token)
  local heard = 1
  if place.owner == direct.owner then
    direct.told[#direct.told + 1] = tonumber(offer.version)
    direct.told[#direct.told + 1] = fence
  else
    -- pcall: a user whose ACL refuses the channel still releases; the waiter finds its permit when it asks again
    heard = redis.pcall(direct.publish, direct.channel .. ':' .. place.owner, '=' .. offer.version .. ' ' .. text(fence))
  end
  if type(heard) ~= 'number' or heard == 0 then
    redis.call('ZREM', permitsKey, place.token)
    if place.mode == 'w' then redis.call('HDEL', infoKey, tokenField, 'writer') else redis.call('HDEL', infoKey, tokenField) end
    return 'gone'
  end
  if place.mode == 'w' then state.writer = place.token end
  if state.firstEnd ~= nil and (not state.firstEnd or now + offer.ttl < state.firstEnd) then state.firstEnd = now + offer.ttl end
  coverPermit(offer.ttl)
  -- the keys outlive the place's wait by its offer's ttl already (ACQUIRE); the permits' key, made now, joins them
  if heldBefore == 0 then redis.call('PEXPIRE', permitsKey, redis.call('PTTL', infoKey)) end
  return 'granted'
end

-- Walks the line in order: each place that fits beside the holders and the places before it is served; the
-- first place that does not fit holds back everyone behind it, so nobody overtakes a waiter. A place that left
-- an offer is granted its permit right here (grantPlace) while notices are on; one without has a permit
-- reserved (one reserved now gets the hand-off window to claim it). Lapsed places, and those of a process
-- presumed gone, are passed over. exclusive(): whether a mutex lease holds the key, asked only when someone
-- waits. direct: how grants are told ({ publish, channel, caller = the token of the request that called the
-- line, '' for none: its own script admits it }). line.held (the permits held, those granted here included),
-- line.granted (those) and line.count (with the places that fit) are nil when the line is empty; line.waiting
-- counts the places still in the line.
local function callLine(places, limit, window, exclusive, direct)
  local line = { fitting = {}, reserved = {}, stopped = false, waiting = #places }
  if #places == 0 then return line end
  passOverGone(places)
  local count, writer = holders(limit)
  local heldBefore = count
  local granted = 0
  line.stopped = exclusive()
  for _, place in ipairs(places) do
    if place.lapsed then
      -- holds nobody back
    elseif not line.stopped and fits(limit, place.mode, count, writer) then
      local offer = place.reservedUntil == 0 and place.token ~= direct.caller and direct.publish ~= '' and offerOf(place)
      local outcome = offer and grantPlace(place, offer, direct, count)
      if outcome then
        -- granted, or gone: either way out of the line, holding nobody back
        place.lapsed, place.gone, line.waiting = true, true, line.waiting - 1
        if outcome == 'granted' then
          count, granted = count + 1, granted + 1
          writer = writer or place.mode == 'w'
        end
      else
        count = count + 1
        writer = writer or place.mode == 'w'
        line.fitting[place.token] = true
        -- the caller's own place needs no reservation: its script admits it now
        if place.reservedUntil == 0 and place.token ~= direct.caller then
          place.reservedUntil = now + window
          savePlace(place)
          line.reserved[#line.reserved + 1] = place
        end
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
  line.count, line.writer, line.held, line.granted = count, writer, heldBefore + granted, granted
  return line
end

-- nothing holds or waits any more: the keys go
local function dropKeys()
  redis.call('DEL', permitsKey, infoKey, lineKey)
end
`;
