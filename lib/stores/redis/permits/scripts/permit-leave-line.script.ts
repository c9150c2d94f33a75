import { noticeArgs, permitScript, type PermitNotices } from './permit-script.js';

/**
 * Gives up a waiting place; the places it held back are called in the same step.
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
local places = liveLine()
local line = callLine(places, limitOf(state.shape), window, mutexHeld)
notify(line, places, publish, channel, '', '')
-- the last place left, and no permit is held: the keys go
if #places == 0 and redis.call('ZCARD', permitsKey) == 0 then dropKeys() end
return 1
`,
);

/** The ARGV of {@link PERMIT_LEAVE_LINE} for `token`, in the order the script reads them. */
export function permitLeaveLineArgs(token: string, notices: PermitNotices): Array<string | number> {
  return [token, ...noticeArgs(notices)];
}
