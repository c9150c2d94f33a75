import { noticeArgs, permitScript, type PermitNotices } from './permit-script.js';

/**
 * Ends the permit of a token and, in the same step, serves the line in its order with the permits freed: a
 * place that left an offer is granted its permit, and only its process is told; one without has a permit
 * reserved, and its process is told to claim it.
 *
 * KEYS: 1 permits, 2 info, 3 line, 4 fence, 5 lock, 6 mutexLine (permit.lua.ts says what each holds).
 * ARGV: 1 token; 2 hand-off window ms; 3 publish command ('PUBLISH', 'SPUBLISH' or ''); 4 channel.
 * Returns 1 when the token held a live permit, 0 otherwise.
 */
export const PERMIT_RELEASE = permitScript(
  'permit-release',
  `
local token, window, publish, channel = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
readResource(token)
prunePermits()
local limit = limitOf(state.shape)
-- whether this permit ends last, so that the guard lasts as long as it
local last = redis.call('ZRANGE', permitsKey, -1, -1)[1] == token
local released = redis.call('ZREM', permitsKey, token)
if released == 1 then
  if not limit and state.writer == token then
    redis.call('HDEL', infoKey, 'p:' .. token, 'writer')
    state.writer = nil
  else
    redis.call('HDEL', infoKey, 'p:' .. token)
  end
end
-- called even when the permit had ended: its end (or another's, pruned above) may free the line's first
local places = liveLine()
local line = callLine(places, limit, window, mutexHeld, { publish = publish, channel = channel, caller = '' })
notify(line, places, publish, channel, '', '')
local held = line.held
if held == nil then held = redis.call('ZCARD', permitsKey) end
if held == 0 then
  if line.waiting == 0 then dropKeys() end
  endGuard(publish, channel, window)
elseif last then
  shrinkGuard()
end
return released
`,
);

/** The ARGV of {@link PERMIT_RELEASE} for `token`, in the order the script reads them. */
export function permitReleaseArgs(token: string, notices: PermitNotices): Array<string | number> {
  return [token, ...noticeArgs(notices)];
}
