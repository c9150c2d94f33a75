import { createHash } from 'node:crypto';

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
 * Lua shared by the scripts that grant a lease: writes the lease, its fence and its holder record.
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
  -- INCR first: a fence key of another type, or one that holds no integer, fails the script before anything
  -- is written (and INCR is what the lock user's ACL already allows)
  local fence = redis.call('INCR', fenceKey)
  local now = redis.call('TIME')
  local clock = tonumber(now[1]) * 1000000 + tonumber(now[2])
  -- the clock as a floor: a counter behind it (new, or older than fences already granted) jumps to it
  if fence < clock then
    fence = clock
    redis.call('SET', fenceKey, string.format('%.0f', fence))
  end
  return fence
end

local function grant(lockKey, fenceKey, holderKey, token, ttl, fencing, holder)
  local fence = 0
  if fencing == '1' then fence = nextFence(fenceKey) end
  redis.call('SET', lockKey, token, 'PX', ttl)
  -- who holds it, for inspect(): the same expiry as the lease, so it never describes a past holder;
  -- a grant without a record drops one left by a lease deleted from outside
  if holder ~= '' then
    redis.call('SET', holderKey, holder, 'PX', ttl)
  else
    redis.call('DEL', holderKey)
  end
  return fence
end
`;

/**
 * Lua shared by the scripts that release a lease (the token was checked): drops the holder record and tells
 * waiters. When processes stand in the key's line, the one that has waited longest gets the key reserved
 * ('>owner') for the hand-off window and the notice names it, so only it wakes; otherwise, when waiters
 * elsewhere heard the notice, the key is reserved briefly ('~owner') against this owner so that one of them
 * wins instead of this process re-taking it.
 */
const RELEASE_LUA = `
local function releaseToWaiters(lockKey, holderKey, lineKey, channel, publish, owner, window, ownListeners)
  redis.call('DEL', holderKey)
  if tonumber(window) > 0 then
    local nextOwner = redis.call('LPOP', lineKey)
    if nextOwner then
      redis.call('SET', lockKey, '>' .. nextOwner, 'PX', window)
      -- pcall: a user whose ACL refuses the channel still releases; its waiters fall back to their backoff
      if publish ~= '' then redis.pcall(publish, channel, nextOwner) end
      return
    end
  end
  local listeners = 0
  if publish ~= '' then
    local published = redis.pcall(publish, channel, '*')
    if type(published) == 'number' then listeners = published end
  end
  if listeners > tonumber(ownListeners) and tonumber(window) > 0 then
    redis.call('SET', lockKey, '~' .. owner, 'PX', window)
  else
    redis.call('DEL', lockKey)
  end
end
`;

/**
 * Grants the lease if the key is free, ours already, reserved for this owner ('>owner': it was first in the
 * line), or reserved against anyone but this owner ('~owner'). A refused caller that will wait takes a place
 * in the key's line of waiting processes (once), so that a release reserves the key for it in its turn.
 * KEYS: lock, fence, holder, line. ARGV: token, ttl ms, fencing ('1'/'0'), owner id, holder record ('' for
 * none), line ('0' stays out of it, '1' joins when refused, '2' also leaves it when granted), line ttl ms.
 * Returns {1, fence or 0} on a grant, {0, holder's PTTL} otherwise.
 */
export const ACQUIRE = script(
  'acquire',
  `${GRANT_LUA}
local current = redis.call('GET', KEYS[1])
-- our own token: a retry whose first reply was lost; refresh it and answer as the first time
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  if ARGV[5] ~= '' then redis.call('SET', KEYS[3], ARGV[5], 'PX', ARGV[2]) end
  if ARGV[3] == '1' then return {1, tonumber(redis.call('GET', KEYS[2]) or '0')} end
  return {1, 0}
end
-- reserved for us: the release that reserved it took us out of the line
if current == '>' .. ARGV[4] then
  return {1, grant(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[5])}
end
local mark = current and string.sub(current, 1, 1)
if not current or (mark == '~' and current ~= '~' .. ARGV[4]) then
  -- a free key goes to whoever asks; a waiter that got it this way gives up its place in the line
  if ARGV[6] == '2' then redis.call('LREM', KEYS[4], 0, ARGV[4]) end
  return {1, grant(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[5])}
end
if ARGV[6] ~= '0' and not redis.call('LPOS', KEYS[4], ARGV[4]) then
  -- a new line gets an expiry: places of waiters that left without their turn go with it once the key is
  -- quiet (a line still busy then is dropped too; its waiters take new places at their next refusal)
  if redis.call('RPUSH', KEYS[4], ARGV[4]) == 1 then redis.call('PEXPIRE', KEYS[4], ARGV[7]) end
end
return {0, redis.call('PTTL', KEYS[1])}
`,
);

/**
 * Releases the lease only while the token holds it, and tells waiters in the same step.
 * KEYS: lock, holder, line. ARGV: token, channel, publish command ('PUBLISH', 'SPUBLISH' or '' for none),
 * owner id, hand-off window ms, how many listeners of the notice may hear it before the key is held back
 * from the releaser (its own subscriber: 0 or 1; with the line on, every waiter is in the line, so a huge
 * number: subscribers that linger after their wait must not hold the key back).
 * Returns 1 when released, 0 when the lease was not ours any more.
 */
export const RELEASE = script(
  'release',
  `${RELEASE_LUA}
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
releaseToWaiters(KEYS[1], KEYS[2], KEYS[3], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
return 1
`,
);

/**
 * Releases the lease only while the token holds it and, unless another process stands first in the key's
 * line, grants it in the same step to the releaser's next local waiter (one round trip, no notice). When
 * another process is first in line, releases as RELEASE does, so a process cannot keep a key others want.
 * KEYS: lock, fence, holder, line. ARGV: token, channel, publish command ('PUBLISH' or 'SPUBLISH'), owner id,
 * hand-off window ms, next token, next ttl ms, next fencing ('1'/'0'), next holder record ('' for none).
 * Returns {0, 0} when the lease was not ours, {1, 0} when released to other waiters, {2, fence or 0}
 * when handed over.
 */
export const HAND_OVER = script(
  'hand-over',
  `${GRANT_LUA}${RELEASE_LUA}
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {0, 0} end
local first = redis.call('LINDEX', KEYS[4], 0)
if first and first ~= ARGV[4] then
  releaseToWaiters(KEYS[1], KEYS[3], KEYS[4], ARGV[2], ARGV[3], ARGV[4], ARGV[5], 0)
  return {1, 0}
end
-- our own turn (or nobody waits elsewhere): our next waiter takes it
if first then redis.call('LPOP', KEYS[4]) end
return {2, grant(KEYS[1], KEYS[2], KEYS[3], ARGV[6], ARGV[7], ARGV[8], ARGV[9])}
`,
);

/**
 * Sets the lease to a new length only while the token holds it; a missing key stays missing.
 * KEYS: lock, holder. ARGV: token, ttl ms.
 * Returns 1 when extended, 0 when another token (or a hand-off reservation) holds the key, -2 when nothing
 * does (expired, evicted, or lost in a restart; -2 as PTTL says of a missing key). A store on one server
 * treats 0 and -2 alike; a store over several nodes gives a lease back where it is missing (RedlockStore).
 */
export const EXTEND = script(
  'extend',
  `
local current = redis.call('GET', KEYS[1])
if not current then return -2 end
if current ~= ARGV[1] then return 0 end
-- the holder record lives exactly as long as the lease (a no-op when the grant had none)
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
`,
);

/**
 * {@link EXTEND} for many leases in one call: how the renewal scheduler renews a batch with one script
 * run instead of one per lease (only where every key lives on one server: not across Cluster slots).
 * KEYS: lock and holder of each lease, in pairs. ARGV: token and ttl ms of each lease, in pairs.
 * Returns one entry per lease: 1 extended, 0 another token holds the key, -2 nothing does, -1 the key holds
 * another type.
 */
export const EXTEND_MANY = script(
  'extend-many',
  `
local outcomes = {}
for i = 1, #KEYS, 2 do
  -- pcall: a key of another type fails its own lease, not the rest of the batch
  local current = redis.pcall('GET', KEYS[i])
  if type(current) == 'table' and current.err then
    outcomes[#outcomes + 1] = -1
  elseif not current then
    outcomes[#outcomes + 1] = -2
  elseif current ~= ARGV[i] then
    outcomes[#outcomes + 1] = 0
  else
    redis.call('PEXPIRE', KEYS[i + 1], ARGV[i + 1])
    outcomes[#outcomes + 1] = redis.call('PEXPIRE', KEYS[i], ARGV[i + 1])
  end
end
return outcomes
`,
);

/**
 * Gives a lease back to a node that lost it, only where nothing holds the key: never over another token, a
 * hand-off reservation or anything else (see RedlockStore for when this is safe). Leaves the fence counter
 * alone: the lease keeps the fence it was granted with.
 * KEYS: lock, holder. ARGV: token, ttl ms, holder record ('' for none).
 * Returns 1 when granted again, 0 when the key was not free.
 */
export const REGRANT = script(
  'regrant',
  `
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[2])
else
  redis.call('DEL', KEYS[2])
end
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
