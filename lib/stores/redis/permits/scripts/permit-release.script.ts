import { noticeArgs, permitScript, type PermitNotices } from './permit-script.js';

/**
 * Ends the permit of a token and, in the same step, serves the line in its order with the permits freed: a
 * place that left an offer is granted its permit, and only its process is told; one without has a permit
 * reserved, and its process is told to claim it.
 *
 * KEYS: 1 state, 2 fence, 3 lock, 4 mutexLine (permit.lua.ts says what each holds).
 * ARGV: 1 token; 2 hand-off window ms; 3 publish command ('PUBLISH', 'SPUBLISH' or ''); 4 channel; 5 owner id
 * of the releasing process, whose own waiters granted a permit are told in the reply, not by a notice.
 * Returns {1 when the token held a live permit, else 0; then version, fence of each such grant}.
 */
export const PERMIT_RELEASE = permitScript(
  'permit-release',
  `
local token, window, publish, channel, owner = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5]
readResource(token)
local limit = limitOf(state.shape)
local released = dropPermit(token)
-- called even when the permit had ended: its end (or another's, dropped when read) may free the line's first
local places = liveLine()
local told = {}
local line = callLine(places, limit, window, mutexHeld, { publish = publish, channel = channel, caller = '', owner = owner, told = told })
notify(line, places, publish, channel, '', '')
saveResource()
if #state.permits == 0 then
  endGuard(publish, channel, window)
elseif (line.granted or 0) == 0 then
  -- nothing granted here: the guard shrinks to the longest permit left (a grant covered itself, and the guard
  -- then outlasts the permits by at most what the released one had left)
  shrinkGuard()
end
return { released, unpack(told) }
`,
);

/** The ARGV of {@link PERMIT_RELEASE} for `token` released by `owner`, in the order the script reads them. */
export function permitReleaseArgs(token: string, notices: PermitNotices, owner: string): Array<string | number> {
  return [token, ...noticeArgs(notices), owner];
}
