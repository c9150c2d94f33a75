import { createHash } from 'node:crypto';

/** A Lua script with its SHA1, so it runs by EVALSHA and is sent whole only when the server lacks it. */
export interface LuaScript {
  readonly name: string;
  readonly lua: string;
  readonly sha: string;
  readonly keys: number;
}

function script(name: string, keys: number, lua: string): LuaScript {
  const body = lua.trim();
  return { name, keys, lua: body, sha: createHash('sha1').update(body).digest('hex') };
}

/**
 * Grants the lease if the key is free, ours already, or reserved for hand-off to anyone but this owner.
 * KEYS: lock, fence, holder. ARGV: token, ttl ms, fencing ('1'/'0'), owner id, holder record ('' for none).
 * Returns {1, fence or 0} on a grant, {0, holder's PTTL} otherwise.
 */
export const ACQUIRE = script(
  'acquire',
  3,
  `
local current = redis.call('GET', KEYS[1])
-- our own token: a retry whose first reply was lost; refresh it and answer as the first time
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  if ARGV[5] ~= '' then redis.call('SET', KEYS[3], ARGV[5], 'PX', ARGV[2]) end
  if ARGV[3] == '1' then return {1, tonumber(redis.call('GET', KEYS[2]) or '0')} end
  return {1, 0}
end
-- held by a token, or reserved ('~owner') by a releaser that must not re-take it before other waiters
if current and (string.sub(current, 1, 1) ~= '~' or current == '~' .. ARGV[4]) then
  return {0, redis.call('PTTL', KEYS[1])}
end
-- the fence counter has no expiry: it must keep growing across every grant of this resource;
-- it goes first, so a fence key of another type fails the script before anything is written
local fence = 0
if ARGV[3] == '1' then
  fence = redis.call('INCR', KEYS[2])
  -- a counter that starts over (a new resource, or one a restart lost) starts from the server clock in
  -- microseconds: above every fence granted before it, as no resource is granted twice in a microsecond
  if fence == 1 then
    local now = redis.call('TIME')
    fence = tonumber(now[1]) * 1000000 + tonumber(now[2])
    redis.call('SET', KEYS[2], string.format('%.0f', fence))
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
-- who holds it, for inspect(): the same expiry as the lease, so it never describes a past holder;
-- a grant without a record drops one left by a lease deleted from outside
if ARGV[5] ~= '' then
  redis.call('SET', KEYS[3], ARGV[5], 'PX', ARGV[2])
else
  redis.call('DEL', KEYS[3])
end
return {1, fence}
`,
);

/**
 * Releases the lease only while the token holds it, and tells waiters in the same step.
 * KEYS: lock, holder. ARGV: token, channel, publish command ('PUBLISH', 'SPUBLISH' or '' for none),
 * owner id, hand-off window ms, how many of the listeners are the releaser's own subscriber.
 * Returns 1 when released, 0 when the lease was not ours any more.
 */
export const RELEASE = script(
  'release',
  2,
  `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
-- the holder record goes with the lease, also when the key stays reserved for hand-off
redis.call('DEL', KEYS[2])
local listeners = 0
-- pcall: a user whose ACL refuses the channel still releases; its waiters fall back to their backoff
if ARGV[3] ~= '' then
  local published = redis.pcall(ARGV[3], ARGV[2], '1')
  if type(published) == 'number' then listeners = published end
end
-- waiters in other processes heard us: reserve the key briefly against this owner so one of them wins
if listeners > tonumber(ARGV[6]) and tonumber(ARGV[5]) > 0 then
  redis.call('SET', KEYS[1], '~' .. ARGV[4], 'PX', ARGV[5])
else
  redis.call('DEL', KEYS[1])
end
return 1
`,
);

/**
 * Sets the lease to a new length only while the token holds it; a missing key stays missing.
 * KEYS: lock, holder. ARGV: token, ttl ms. Returns 1 when extended, 0 otherwise.
 */
export const EXTEND = script(
  'extend',
  2,
  `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
-- the holder record lives exactly as long as the lease (a no-op when the grant had none)
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
`,
);

/**
 * Raises a fence counter to at least a value, never lowering it: how a store over several nodes brings
 * the counters of a quorum up to the fence it granted (see RedlockStore).
 * KEYS: fence. ARGV: fence. Returns the counter after the call.
 */
export const RAISE_FENCE = script(
  'raise-fence',
  1,
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
export const ALL_SCRIPTS: readonly LuaScript[] = [ACQUIRE, RELEASE, EXTEND, RAISE_FENCE];
