/**
 * Lua shared by every permit script. All of them take the same KEYS, on one Cluster slot (permit-keys.ts):
 * 1 state: the resource's whole permit state, one value (permit-state.lua.ts): its shape, its writer, its
 *   permits with their records and the places of its line with their offers; read once, written once
 * 2 fence: the resource's fence counter, shared with its mutex leases (../../scripts/fence.lua.ts)
 * 3 lock: the resource's mutex lease: while it exists, no permit is granted; while permits live, their guard
 *   (see GUARD below)
 * 4 mutexLine: the mutex's line of waiting processes (entries that start with an owner id, see
 *   ../../line/line-entries.lua.ts), whose own channels hear the guard's end
 * Times come from the server's TIME, so that every expiry is of one clock.
 */
export const PERMIT_LUA = `
local stateKey, fenceKey, lockKey, mutexLineKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local clock = redis.call('TIME')
local now = math.floor((tonumber(clock[1]) * 1000000 + tonumber(clock[2])) / 1000)
-- the resource as the script read it (readResource) and changes it; written back once (saveResource)
local state = nil

-- whole digits: a number passed to Redis as such would reach it in whatever notation Lua prints it
local function text(number)
  return string.format('%.0f', number)
end

-- nil for 'rw': a readers-writer resource
local function limitOf(shape)
  if not shape or shape == 'rw' then return nil end
  return tonumber(string.sub(shape, 7))
end

-- the resource in one read (permits whose lease ran out and places whose wait ended already left out), with
-- token's permit as state.own (nil when it holds none)
local function readResource(token)
  state = readPermitState(stateKey, now)
  for _, permit in ipairs(state.permits) do
    if permit.token == token then state.own = permit end
  end
end

-- the resource's changes in one write
local function saveResource()
  writePermitState(stateKey, state)
end

-- when the first of the live permits ends (ms of the server clock), nil with none
local function soonestPermitEnd()
  local soonest = nil
  for _, permit in ipairs(state.permits) do
    if not soonest or permit.expires < soonest then soonest = permit.expires end
  end
  return soonest
end

-- the permit a place's offer asks for ('version ttl fencing holder'), nil for a place without one
local function offerOf(place)
  if not place.offerText then return nil end
  local version, ttl, fencing, holder = string.match(place.offerText, '^(%d+) (%d+) ([01]) ?(.*)$')
  if not version then return nil end
  return { version = version, ttl = tonumber(ttl), fencing = fencing, holder = holder }
end

-- the place's record changed
local function savePlace(place)
  -- a place without a reservation has none for its process to answer
  place.answered = place.answered and place.reservedUntil > 0
  state.changed = true
end

-- a place leaves the line, with its offer
local function dropPlace(token)
  for _, place in ipairs(state.places) do
    if place.token == token and not place.left then
      place.left, state.changed = true, true
    end
  end
end

-- a permit is granted: its record joins the state (as the writer's when its mode is 'w')
local function addPermit(token, mode, ttl, fence, holder)
  state.permits[#state.permits + 1] = { token = token, expires = now + ttl, mode = mode, fence = fence, holder = holder }
  if mode == 'w' then state.writer = token end
  state.changed = true
end

-- token's permit ends, with its record (and the writer's mark when it was the writer): 1 when it held one
local function dropPermit(token)
  for index, permit in ipairs(state.permits) do
    if permit.token == token then
      table.remove(state.permits, index)
      if state.writer == token then state.writer = nil end
      state.changed = true
      return 1
    end
  end
  return 0
end

-- the places still in the line, in order (a fresh list: those that leave while it is walked stay in it)
local function liveLine()
  local places = {}
  for _, place in ipairs(state.places) do
    if not place.left then places[#places + 1] = place end
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
  local count = #state.permits
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
  local last = 0
  for _, permit in ipairs(state.permits) do last = math.max(last, permit.expires) end
  if last > now then setLock(value, last - now) end
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


-- Grants the permit a place's offer asks for, in this step, and tells its process on its own channel
-- ('=version fence', line-protocol.ts), so its waiter holds it without another request: 'granted'; 'gone'
-- when nobody listens there though its process did when it left the offer (place.listening: it is gone; the
-- place leaves the line, no permit is kept); nil when no fence can be drawn (the waiter's own request will say
-- why), or when its process was not told and may well be alive (its first subscription still on its way, or
-- the channel refused by ACL): then the place stays and is served as one without an offer, with a reservation.
-- A place of the calling process (direct.owner) is told in the script's reply instead (direct.told: version,
-- fence, ...).
local function grantPlace(place, offer, direct)
  local fence = 0
  if offer.fencing == '1' then
    fence = nextFence(fenceKey)
    if type(fence) == 'table' then return nil end
  end
  local heard = 1
  if place.owner == direct.owner then
    direct.told[#direct.told + 1] = tonumber(offer.version)
    direct.told[#direct.told + 1] = fence
  else
    -- pcall: a user whose ACL refuses the channel still releases, and the waiter keeps its turn: its permit is
    -- reserved, and it claims that when it asks again (an error says nothing of whether its process is alive)
    heard = redis.pcall(direct.publish, direct.channel .. ':' .. place.owner, '=' .. offer.version .. ' ' .. text(fence))
    if type(heard) ~= 'number' or (heard == 0 and not place.listening) then return nil end
  end
  dropPlace(place.token)
  if heard == 0 then return 'gone' end
  addPermit(place.token, place.mode, offer.ttl, fence, offer.holder)
  coverPermit(offer.ttl)
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
      local outcome = offer and grantPlace(place, offer, direct)
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
`;
