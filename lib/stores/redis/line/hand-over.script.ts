import type { AcquireRequest } from '../../../interfaces/lease.interface.js';
import { GRANT_LUA } from '../scripts/grant.lua.js';
import { LEASE_LUA } from '../scripts/lease.lua.js';
import { luaScript } from '../scripts/lua-script.js';
import { LINE_ENTRIES_LUA } from './line-entries.lua.js';
import { RELEASE_TO_WAITERS_LUA } from './release-to-waiters.lua.js';
import type { ReleaseCall } from '../scripts/release.script.js';

/**
 * Releases the lease only while the token holds it and, unless another process stands first in the key's
 * line, grants it in the same step to the releaser's next local waiter (one round trip, no notice). When
 * another process is first in line, releases as RELEASE does, so a process cannot keep a key others want.
 *
 * KEYS: 1 lock, 2 fence, 3 line.
 * ARGV: 1 token; 2 channel; 3 publish command ('PUBLISH' or 'SPUBLISH'); 4 owner id; 5 hand-off window ms;
 * 6 next token; 7 next ttl ms; 8 next fencing ('1'/'0'); 9 next holder record ('' for none).
 * Returns {0, 0} when the lease was not ours, {1, 0} when released to other waiters, {2, fence or 0}
 * when handed over.
 */
export const HAND_OVER = luaScript(
  'hand-over',
  `${LEASE_LUA}${GRANT_LUA}${LINE_ENTRIES_LUA}${RELEASE_TO_WAITERS_LUA}
local own = ownership(redis.call('GET', KEYS[1]), ARGV[1])
if own == 0 then return {0, 0} end
local marked = false
if own == 2 then
  local first = redis.call('LINDEX', KEYS[3], 0)
  if first and entryOwner(first) ~= ARGV[4] then
    releaseToWaiters({
      lock = KEYS[1], fence = KEYS[2], line = KEYS[3],
      channel = ARGV[2], publish = ARGV[3], owner = ARGV[4], window = ARGV[5], ownListeners = 0,
    })
    return {1, 0}
  end
  -- our own turn: our next waiter takes it, marked while others still stand in the line
  if first then redis.call('LPOP', KEYS[3]) end
  marked = redis.call('LLEN', KEYS[3]) > 0
end
local fence = grant(KEYS[1], KEYS[2], leaseValue(ARGV[6], ARGV[9]), ARGV[7], ARGV[8], marked)
if type(fence) == 'table' then return fence end
return {2, fence}
`,
);

/**
 * The ARGV of {@link HAND_OVER} for `token`, released as `call` says when another process is first in line
 * (its own listeners are not counted there), else granted to `next`; in the order the script reads them.
 */
export function handOverArgs(
  token: string,
  call: Omit<ReleaseCall, 'ownListeners'>,
  next: AcquireRequest,
): Array<string | number> {
  return [
    token,
    call.channel,
    call.publish,
    call.owner,
    call.handoffWindow,
    next.token,
    next.ttl,
    next.fencing ? '1' : '0',
    next.holder ?? '',
  ];
}
