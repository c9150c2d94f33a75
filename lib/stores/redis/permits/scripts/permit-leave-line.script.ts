import { noticeArgs, permitScript, type PermitNotices } from './permit-script.js';

/**
 * Gives up a waiting place, and the permit a release may have granted it directly meanwhile (its waiter stopped
 * waiting before it took it); the places it held back are called in the same step.
 *
 * KEYS: 1 permits, 2 info, 3 line, 4 fence, 5 lock, 6 mutexLine (permit.lua.ts says what each holds).
 * ARGV: 1 token; 2 hand-off window ms; 3 publish command ('PUBLISH', 'SPUBLISH' or ''); 4 channel.
 * Returns 1.
 */
export const PERMIT_LEAVE_LINE = permitScript(
  'permit-leave-line',
  `
local token, window, publish, channel = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
readResource(token)
prunePermits()
dropPlace(token)
local limit = limitOf(state.shape)
-- a permit granted to the place: nobody will use it
local last = false
if state.own then
  last = redis.call('ZRANGE', permitsKey, -1, -1)[1] == token
  dropPermit(token)
end
local places = liveLine()
local line = callLine(places, limit, window, mutexHeld, { publish = publish, channel = channel, caller = '' })
notify(line, places, publish, channel, '', '')
local held = line.held
if held == nil then held = redis.call('ZCARD', permitsKey) end
if held == 0 then
  -- the last place left, and no permit is held: the keys go
  if line.waiting == 0 then dropKeys() end
  if state.own then endGuard(publish, channel, window) end
elseif last then
  shrinkGuard()
end
return 1
`,
);

/** The ARGV of {@link PERMIT_LEAVE_LINE} for `token`, in the order the script reads them. */
export function permitLeaveLineArgs(token: string, notices: PermitNotices): Array<string | number> {
  return [token, ...noticeArgs(notices)];
}
