import { noticeArgs, permitScript, type PermitNotices } from './permit-script.js';

/**
 * Gives up a waiting place, and the permit a release may have granted it directly meanwhile (its waiter stopped
 * waiting before it took it); the places it held back are called in the same step.
 *
 * KEYS: 1 state, 2 fence, 3 lock, 4 mutexLine (permit.lua.ts says what each holds).
 * ARGV: 1 token; 2 hand-off window ms; 3 publish command ('PUBLISH', 'SPUBLISH' or ''); 4 channel.
 * Returns 1.
 */
export const PERMIT_LEAVE_LINE = permitScript(
  'permit-leave-line',
  `
local token, window, publish, channel = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
readResource(token)
dropPlace(token)
local limit = limitOf(state.shape)
-- a permit granted to the place: nobody will use it
local last = false
if state.own then
  last = true
  for _, permit in ipairs(state.permits) do
    if permit.expires > state.own.expires then last = false end
  end
  dropPermit(token)
end
local places = liveLine()
local line = callLine(places, limit, window, mutexHeld, { publish = publish, channel = channel, caller = '' })
notify(line, places, publish, channel, '', '')
saveResource()
if #state.permits == 0 then
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
