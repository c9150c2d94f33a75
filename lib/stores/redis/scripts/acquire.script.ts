import type { AcquireRequest } from '../../../interfaces/lease.interface.js';
import { LINE_ENTRIES_LUA } from '../line/line-entries.lua.js';
import { encodeOffer, type LineMode } from '../line/line-protocol.js';
import { GRANT_LUA } from './grant.lua.js';
import { LEASE_LUA } from './lease.lua.js';
import { luaScript } from './lua-script.js';

/**
 * What {@link ACQUIRE} answers in place of the holder's PTTL when the lease that refused the caller is the one its
 * own release granted (ARGV 10).
 */
export const PASSED_ON = -3;

/**
 * Grants the lease if the key is free, ours already, reserved for this owner ('>owner': it was first in the
 * line), or reserved against anyone but this owner ('~owner'). A refused caller that will wait marks the
 * lease (so that its release tells the waiters) and, with the line on, takes a place in the key's line of
 * waiting processes (once), so that a release reserves the key for it in its turn.
 *
 * KEYS: 1 lock, 2 fence, 3 line.
 * ARGV: 1 token; 2 ttl ms; 3 fencing ('1'/'0'); 4 owner id; 5 holder record ('' for none); 6 line ('0' stays
 * out of it, '1' joins when refused, '2' also leaves it when granted); 7 line ttl ms; 8 mark the lease when
 * refused ('1'/'0'); 9 offer ('version token ttl fencing holder', '' for none: with it, a refused caller in
 * the line leaves its request in its entry, so that a release can grant it the lease directly); 10 the token of
 * the lease the caller's own release last granted straight to a waiter elsewhere ('' for none).
 * Returns {1, fence or 0} on a grant, {0, holder's PTTL} otherwise, or {0, PASSED_ON} when that lease of ARGV 10
 * refused it: the caller knows its end (it was granted after its release was sent, with a ttl it was told), so
 * the script asks no PTTL.
 */
export const ACQUIRE = luaScript(
  'acquire',
  `${LEASE_LUA}${GRANT_LUA}${LINE_ENTRIES_LUA}
local value = leaseValue(ARGV[1], ARGV[5])
local waits = ARGV[6] ~= '0' or ARGV[8] == '1'
local current
if ARGV[6] ~= '2' then
  -- a free key goes to whoever asks, in one command (and the fence), unless the caller has a place to give up;
  -- GET: a refused caller learns what holds the key from the same command
  current = redis.call('SET', KEYS[1], value, 'NX', 'PX', ARGV[2], 'GET')
  if not current then
    if ARGV[3] ~= '1' then return {1, 0} end
    local fence = nextFence(KEYS[2])
    if type(fence) == 'table' then
      -- a fence counter of another type: no lease without its fence
      redis.call('DEL', KEYS[1])
      return fence
    end
    return {1, fence}
  end
else
  current = redis.call('GET', KEYS[1])
end
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
    leaveLine(KEYS[3], ARGV[4])
    marked = redis.call('LLEN', KEYS[3]) > 0
  end
  local fence = grant(KEYS[1], KEYS[2], value, ARGV[2], ARGV[3], marked)
  if type(fence) == 'table' then return fence end
  return {1, fence}
end
if ARGV[6] ~= '0' then
  local entry = ARGV[4]
  if ARGV[9] ~= '' then entry = ARGV[4] .. ' ' .. ARGV[9] end
  -- a first ask that leaves an offer is its process's only one on the way (and nobody of it waits yet): no
  -- place to look for
  local placed, index
  if ARGV[6] == '2' or ARGV[9] == '' then placed, index = placeOf(KEYS[3], ARGV[4]) end
  if not placed then
    -- a new line gets an expiry: places of waiters that left without their turn go with it once the key is
    -- quiet (a line still busy then is dropped too; its waiters take new places at their next refusal)
    if redis.call('RPUSH', KEYS[3], entry) == 1 then redis.call('PEXPIRE', KEYS[3], ARGV[7]) end
  elseif ARGV[9] ~= '' and placed ~= entry then
    -- the latest request of this process stands in its place
    redis.call('LSET', KEYS[3], index, entry)
  end
end
-- the lease our own release granted: its waiter's mark is on it, and the caller knows its end
if ARGV[10] ~= '' and ownership(current, ARGV[10]) == 2 then return {0, ${PASSED_ON}} end
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
  /** Whether it stays out of the line, joins it when refused, or also leaves it when granted. */
  readonly line: LineMode;
  /** How long a new line lives, in ms. */
  readonly lineTtl: number;
  /** Whether a refusal marks the lease, so that its release tells the waiters. */
  readonly marks: boolean;
  /** With a place in the line, the version under which this request stands there to be granted directly. */
  readonly offer?: number;
  /** The token of the lease this process's last release of the key granted straight to a waiter elsewhere. */
  readonly passedOn?: string;
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
    place.offer === undefined ? '' : encodeOffer(place.offer, request),
    place.passedOn ?? '',
  ];
}
