import { permitScript } from './permit-script.js';

/**
 * Sets a live permit to a new length; an ended one stays ended.
 *
 * KEYS: 1 state, 2 fence, 3 lock, 4 mutexLine (permit.lua.ts says what each holds).
 * ARGV: 1 token; 2 ttl ms.
 * Returns 1 when extended, 0 when the token holds no live permit.
 */
export const PERMIT_EXTEND = permitScript(
  'permit-extend',
  `
local token, ttl = ARGV[1], tonumber(ARGV[2])
readResource(token)
local own = state.own
if not own then
  saveResource()
  return 0
end
own.expires = now + ttl
state.changed = true
saveResource()
coverPermit(ttl)
return 1
`,
);
