import { permitScript } from './permit-script.js';

/**
 * Sets a live permit to a new length; an ended one stays ended. The resource's keys are never shortened here
 * (another permit or place may need them longer).
 *
 * KEYS: 1 permits, 2 info, 3 line, 4 fence, 5 lock, 6 mutexLine (permit.lua.ts says what each holds).
 * ARGV: 1 token; 2 ttl ms.
 * Returns 1 when extended, 0 when the token holds no live permit.
 */
export const PERMIT_EXTEND = permitScript(
  'permit-extend',
  `
local token, ttl = ARGV[1], tonumber(ARGV[2])
local expires = redis.call('ZSCORE', permitsKey, token)
if not expires or tonumber(expires) <= now then return 0 end
redis.call('ZADD', permitsKey, 'XX', text(now + ttl), token)
keepKeys(now + ttl, {})
coverPermit(ttl)
return 1
`,
);
