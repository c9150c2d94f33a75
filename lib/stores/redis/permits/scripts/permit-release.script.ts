import { noticeArgs, permitScript, type PermitNotices } from './permit-script.js';

/**
 * Ends the permit of a token and, in the same step, reserves freed permits for the line in its order and
 * tells the processes of the places reserved.
 *
 * KEYS: 1 permits, 2 info, 3 line, 4 fence, 5 lock, 6 mutexLine (permit.lua.ts says what each holds).
 * ARGV: 1 token; 2 hand-off window ms; 3 publish command ('PUBLISH', 'SPUBLISH' or ''); 4 channel.
 * Returns 1 when the token held a live permit, 0 otherwise.
 */
export const PERMIT_RELEASE = permitScript(
  'permit-release',
  `
local token, window, publish, channel = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
prunePermits()
local limit = limitOf(redis.call('HGET', infoKey, 'shape'))
local released = redis.call('ZREM', permitsKey, token)
if released == 1 then
  redis.call('HDEL', infoKey, 'p:' .. token)
  if not limit and redis.call('HGET', infoKey, 'writer') == token then redis.call('HDEL', infoKey, 'writer') end
end
-- called even when the permit had ended: its end (or another's, pruned above) may free the line's first
local places = liveLine()
notify(callLine(places, limit, window, mutexHeld), places, publish, channel, '', '')
keepAlive(places)
keepGuard(publish, channel, window)
return released
`,
);

/** The ARGV of {@link PERMIT_RELEASE} for `token`, in the order the script reads them. */
export function permitReleaseArgs(token: string, notices: PermitNotices): Array<string | number> {
  return [token, ...noticeArgs(notices)];
}
