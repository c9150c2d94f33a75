import { createHash } from 'node:crypto';
import type { AcquireRequest } from '../../interfaces/lock-store.interface.js';

/** A Lua script with its SHA1, so it runs by EVALSHA and is sent whole only when the server lacks it. */
export interface LuaScript {
  readonly name: string;
  readonly lua: string;
  readonly sha: string;
}

function script(name: string, lua: string): LuaScript {
  const body = lua.trim();
  return { name, lua: body, sha: createHash('sha1').update(body).digest('hex') };
}

/**
 * Lua shared by every script that reads a lease. A lease's value is its token, then, when the grant came with
 * a holder record, a newline and the record: one key per lease, so a grant is one SET and a release one DEL,
 * and the plain SET NX PX that grants a free key uncontended writes the whole lease. A waiter that was refused
 * marks the lease with a leading '!' (see ACQUIRE): only the release of a marked lease looks at the key's
 * line and sends a notice; nobody waits for an unmarked one. '>owner' and '~owner' are hand-off
 * reservations, never leases (tokens are hex: no lease starts with '!', '>' or '~').
 */
const LEASE_LUA = `
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

/**
 * Lua shared by the scripts that grant a lease: writes the lease and its fence.
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
const GRANT_LUA = `
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

/**
 * Lua shared by the scripts that release a marked lease (the token was checked): someone waited for it.
 * When processes stand in the key's line, the one that has waited longest gets the key: when it left an
 * offer (its waiter's token, ttl, fencing and holder record, see ACQUIRE), the lease is granted to that
 * waiter right here and the notice on that process's own channel (`<channel>:<owner>`) says so ('=version
 * fence'), so the waiter starts without another request; when nobody listens on that channel (PUBLISH
 * answers 0: the process is gone) the grant is undone at once and the next in line is asked. A place without
 * an offer gets the key reserved ('>owner') for the hand-off window and a notice on the key's channel that
 * names it ('owner', or 'owner next' with the one after it), so only it wakes. With the line empty, when
 * waiters elsewhere heard the notice, the key is reserved briefly ('~owner') against this owner so that one
 * of them wins instead of this process re-taking it.
 * w: lock, fence, line, offers (keys); channel, publish, owner, window, ownListeners.
 */
const RELEASE_LUA = `
local function releaseToWaiters(w)
  if tonumber(w.window) > 0 then
    -- a few departed processes in a row are passed over in this call; more wait for their next look
    for _ = 1, 8 do
      local nextOwner = redis.call('LPOP', w.line)
      if not nextOwner then break end
      local offer = redis.call('HGET', w.offers, nextOwner)
      if offer and w.publish ~= '' then
        redis.call('HDEL', w.offers, nextOwner)
        local version, token, ttl, fencing, holder = string.match(offer, '^(%d+) (%x+) (%d+) ([01]) ?(.*)$')
        if version then
          local fence = grant(w.lock, w.fence, leaseValue(token, holder), ttl, fencing, redis.call('LLEN', w.line) > 0)
          if type(fence) ~= 'table' then
            local notice = '=' .. version .. ' ' .. string.format('%.0f', fence)
            local heard = redis.pcall(w.publish, w.channel .. ':' .. nextOwner, notice)
            if type(heard) == 'number' and heard > 0 then return end
            redis.call('DEL', w.lock)
          end
        end
      else
        redis.call('SET', w.lock, '>' .. nextOwner, 'PX', w.window)
        if w.publish ~= '' then
          -- the notice also names who stands next, which looks again once the window is over, should the
          -- reserved process never come (it died while waiting)
          local after = redis.call('LINDEX', w.line, 0)
          local notice = nextOwner
          if after then notice = nextOwner .. ' ' .. after end
          -- pcall: a user whose ACL refuses the channel still releases; its waiters fall back to their backoff
          redis.pcall(w.publish, w.channel, notice)
          -- the one next may listen on its own channel only (it left an offer)
          if after then redis.pcall(w.publish, w.channel .. ':' .. after, notice) end
        end
        return
      end
    end
  end
  local listeners = 0
  if w.publish ~= '' then
    local published = redis.pcall(w.publish, w.channel, '*')
    if type(published) == 'number' then listeners = published end
  end
  if listeners > tonumber(w.ownListeners) and tonumber(w.window) > 0 then
    redis.call('SET', w.lock, '~' .. w.owner, 'PX', w.window)
  else
    redis.call('DEL', w.lock)
  end
end
`;

/**
 * Grants the lease if the key is free, ours already, reserved for this owner ('>owner': it was first in the
 * line), or reserved against anyone but this owner ('~owner'). A refused caller that will wait marks the
 * lease (so that its release tells the waiters) and, with the line on, takes a place in the key's line of
 * waiting processes (once), so that a release reserves the key for it in its turn.
 * KEYS: lock, fence, line, offers. ARGV: token, ttl ms, fencing ('1'/'0'), owner id, holder record ('' for
 * none), line ('0' stays out of it, '1' joins when refused, '2' also leaves it when granted), line ttl ms, mark
 * the lease when refused ('1'/'0'), offer ('version token ttl fencing holder', '' for none: with it, a refused
 * caller in the line leaves its request, so that a release can grant it the lease directly).
 * Returns {1, fence or 0} on a grant, {0, holder's PTTL} otherwise.
 */
export const ACQUIRE = script(
  'acquire',
  `${LEASE_LUA}${GRANT_LUA}
local value = leaseValue(ARGV[1], ARGV[5])
local waits = ARGV[6] ~= '0' or ARGV[8] == '1'
-- a free key goes to whoever asks, in one command (and the fence), unless the caller has a place to give up
if ARGV[6] ~= '2' and redis.call('SET', KEYS[1], value, 'NX', 'PX', ARGV[2]) then
  if ARGV[3] ~= '1' then return {1, 0} end
  local fence = nextFence(KEYS[2])
  if type(fence) == 'table' then
    -- a fence counter of another type: no lease without its fence
    redis.call('DEL', KEYS[1])
    return fence
  end
  return {1, fence}
end
local current = redis.call('GET', KEYS[1])
-- our own token: a retry whose first reply was lost; refresh it and answer as the first time
local own = ownership(current, ARGV[1])
if own > 0 then
  if own == 2 then value = '!' .. value end
  redis.call('SET', KEYS[1], value, 'PX', ARGV[2])
  if ARGV[3] == '1' then return {1, tonumber(redis.call('GET', KEYS[2]) or '0')} end
  return {1, 0}
end
local mark = current and string.sub(current, 1, 1)
-- reserved for us: the release that reserved it took us out of the line; others may still stand in it
if current == '>' .. ARGV[4] then
  local fence = grant(KEYS[1], KEYS[2], value, ARGV[2], ARGV[3], redis.call('LLEN', KEYS[3]) > 0)
  if type(fence) == 'table' then return fence end
  return {1, fence}
end
if not current or (mark == '~' and current ~= '~' .. ARGV[4]) then
  -- a waiter that got it this way gives up its place in the line, and marks it for those still in it
  local marked = false
  if ARGV[6] == '2' then
    redis.call('LREM', KEYS[3], 0, ARGV[4])
    redis.call('HDEL', KEYS[4], ARGV[4])
    marked = redis.call('LLEN', KEYS[3]) > 0
  end
  local fence = grant(KEYS[1], KEYS[2], value, ARGV[2], ARGV[3], marked)
  if type(fence) == 'table' then return fence end
  return {1, fence}
end
if ARGV[6] ~= '0' and not redis.call('LPOS', KEYS[3], ARGV[4]) then
  -- a new line gets an expiry: places of waiters that left without their turn go with it once the key is
  -- quiet (a line still busy then is dropped too; its waiters take new places at their next refusal)
  if redis.call('RPUSH', KEYS[3], ARGV[4]) == 1 then redis.call('PEXPIRE', KEYS[3], ARGV[7]) end
end
if ARGV[6] ~= '0' and ARGV[9] ~= '' then
  -- the latest request of this process stands in its place (the line keeps the order, this its terms)
  redis.call('HSET', KEYS[4], ARGV[4], ARGV[9])
  redis.call('PEXPIRE', KEYS[4], ARGV[7])
end
local pttl = redis.call('PTTL', KEYS[1])
-- mark a lease (not a reservation) once, keeping its expiry (rounded down to the ms: never longer)
if waits and mark ~= '!' and mark ~= '>' and mark ~= '~' and pttl > 0 then
  redis.call('SET', KEYS[1], '!' .. current, 'PX', pttl)
end
return {0, pttl}
`,
);

/** How a caller stands towards the key's line of waiting processes, for {@link acquireArgs}. */
export interface LinePlace {
  /** '0' stays out of the line, '1' joins it when refused, '2' also leaves it when granted. */
  readonly line: '0' | '1' | '2';
  /** How long a new line lives, in ms. */
  readonly lineTtl: number;
  /** Whether a refusal marks the lease, so that its release tells the waiters. */
  readonly marks: boolean;
  /** With a place in the line, the version under which this request stands there to be granted directly. */
  readonly offer?: number;
}

/** The ARGV of {@link ACQUIRE} for a request of `owner`, in the order the script reads them. */
export function acquireArgs(request: AcquireRequest, owner: string, place: LinePlace): Array<string | number> {
  return [
    request.token,
    request.ttl,
    request.fencing ? '1' : '0',
    owner,
    request.holder ?? '',
    place.line,
    place.lineTtl,
    place.marks ? '1' : '0',
    place.offer === undefined
      ? ''
      : `${place.offer} ${request.token} ${request.ttl} ${request.fencing ? '1' : '0'} ${request.holder ?? ''}`,
  ];
}

/**
 * Releases the lease only while the token holds it. An unmarked lease nobody waited for is one DEL; a marked
 * one tells its waiters in the same step.
 * KEYS: lock, fence, line, offers. ARGV: token, channel, publish command ('PUBLISH', 'SPUBLISH' or '' for
 * none), owner id, hand-off window ms, how many listeners of the notice may hear it before the key is held back from the
 * releaser (its own subscriber: 0 or 1; with the line on, every waiter is in the line, so a huge number:
 * subscribers that linger after their wait must not hold the key back).
 * Returns 1 when released, 0 when the lease was not ours any more.
 */
export const RELEASE = script(
  'release',
  `${LEASE_LUA}${GRANT_LUA}${RELEASE_LUA}
local own = ownership(redis.call('GET', KEYS[1]), ARGV[1])
if own == 0 then return 0 end
if own == 1 then
  redis.call('DEL', KEYS[1])
  return 1
end
releaseToWaiters({
  lock = KEYS[1], fence = KEYS[2], line = KEYS[3], offers = KEYS[4],
  channel = ARGV[2], publish = ARGV[3], owner = ARGV[4], window = ARGV[5], ownListeners = ARGV[6],
})
return 1
`,
);

/**
 * Releases the lease only while the token holds it and, unless another process stands first in the key's
 * line, grants it in the same step to the releaser's next local waiter (one round trip, no notice). When
 * another process is first in line, releases as RELEASE does, so a process cannot keep a key others want.
 * KEYS: lock, fence, line, offers. ARGV: token, channel, publish command ('PUBLISH' or 'SPUBLISH'), owner
 * id, hand-off window ms, next token, next ttl ms, next fencing ('1'/'0'), next holder record ('' for none).
 * Returns {0, 0} when the lease was not ours, {1, 0} when released to other waiters, {2, fence or 0}
 * when handed over.
 */
export const HAND_OVER = script(
  'hand-over',
  `${LEASE_LUA}${GRANT_LUA}${RELEASE_LUA}
local own = ownership(redis.call('GET', KEYS[1]), ARGV[1])
if own == 0 then return {0, 0} end
local marked = false
if own == 2 then
  local first = redis.call('LINDEX', KEYS[3], 0)
  if first and first ~= ARGV[4] then
    releaseToWaiters({
      lock = KEYS[1], fence = KEYS[2], line = KEYS[3], offers = KEYS[4],
      channel = ARGV[2], publish = ARGV[3], owner = ARGV[4], window = ARGV[5], ownListeners = 0,
    })
    return {1, 0}
  end
  -- our own turn: our next waiter takes it, marked while others still stand in the line
  if first then
    redis.call('LPOP', KEYS[3])
    redis.call('HDEL', KEYS[4], ARGV[4])
  end
  marked = redis.call('LLEN', KEYS[3]) > 0
end
local fence = grant(KEYS[1], KEYS[2], leaseValue(ARGV[6], ARGV[9]), ARGV[7], ARGV[8], marked)
if type(fence) == 'table' then return fence end
return {2, fence}
`,
);

/**
 * Sets the lease to a new length only while the token holds it; a missing key stays missing.
 * KEYS: lock. ARGV: token, ttl ms.
 * Returns 1 when extended, 0 when another token (or a hand-off reservation) holds the key, -2 when nothing
 * does (expired, evicted, or lost in a restart; -2 as PTTL says of a missing key). A store on one server
 * treats 0 and -2 alike; a store over several nodes gives a lease back where it is missing (RedlockStore).
 */
export const EXTEND = script(
  'extend',
  `${LEASE_LUA}
local current = redis.call('GET', KEYS[1])
if not current then return -2 end
if ownership(current, ARGV[1]) == 0 then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
`,
);

/**
 * {@link EXTEND} for many leases in one call: how the renewal scheduler renews a batch with one script
 * run instead of one per lease (only where every key lives on one server: not across Cluster slots).
 * KEYS: the lock of each lease. ARGV: token and ttl ms of each lease, in pairs.
 * Returns one entry per lease: 1 extended, 0 another token holds the key, -2 nothing does, -1 the key holds
 * another type.
 */
export const EXTEND_MANY = script(
  'extend-many',
  `${LEASE_LUA}
local outcomes = {}
for i = 1, #KEYS do
  -- pcall: a key of another type fails its own lease, not the rest of the batch
  local current = redis.pcall('GET', KEYS[i])
  if type(current) == 'table' and current.err then
    outcomes[i] = -1
  elseif not current then
    outcomes[i] = -2
  elseif ownership(current, ARGV[2 * i - 1]) == 0 then
    outcomes[i] = 0
  else
    outcomes[i] = redis.call('PEXPIRE', KEYS[i], ARGV[2 * i])
  end
end
return outcomes
`,
);

/**
 * Gives a lease back to a node that lost it, only where nothing holds the key: never over another token, a
 * hand-off reservation or anything else (see RedlockStore for when this is safe). Leaves the fence counter
 * alone: the lease keeps the fence it was granted with.
 * KEYS: lock. ARGV: token, ttl ms, holder record ('' for none).
 * Returns 1 when granted again, 0 when the key was not free.
 */
export const REGRANT = script(
  'regrant',
  `${LEASE_LUA}
if not redis.call('SET', KEYS[1], leaseValue(ARGV[1], ARGV[3]), 'NX', 'PX', ARGV[2]) then return 0 end
return 1
`,
);

/**
 * Raises a fence counter to at least a value, never lowering it: how a store over several nodes brings
 * the counters of a quorum up to the fence it granted (see RedlockStore).
 * KEYS: fence. ARGV: fence. Returns the counter after the call.
 */
export const RAISE_FENCE = script(
  'raise-fence',
  `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local target = tonumber(ARGV[1])
-- a maximum, not an assignment: a late or repeated call can never move the counter back
if current >= target then return current end
redis.call('SET', KEYS[1], ARGV[1])
return target
`,
);

/** Every script this package runs, for loading them at startup. */
export const ALL_SCRIPTS: readonly LuaScript[] = [
  ACQUIRE,
  RELEASE,
  HAND_OVER,
  EXTEND,
  EXTEND_MANY,
  RAISE_FENCE,
  REGRANT,
];
