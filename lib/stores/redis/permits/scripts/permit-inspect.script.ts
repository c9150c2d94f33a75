import { permitScript } from './permit-script.js';

/**
 * Reads a resource's permits without changing anything (ended ones are left for the next write to drop).
 *
 * KEYS: 1 state, 2 fence, 3 lock, 4 mutexLine (permit.lua.ts says what each holds).
 * ARGV: none.
 * Returns {shape or '', fence counter or '', places that hold someone back, then per live permit, soonest end first: mode,
 * remaining ms, fence (0 for none), holder record ('' for none)}.
 */
export const PERMIT_INSPECT = permitScript(
  'permit-inspect',
  `
readResource('')
local places = liveLine()
passOverGone(places)
local waiting = 0
for _, place in ipairs(places) do
  if not place.lapsed then waiting = waiting + 1 end
end
local reply = { state.shape or '', redis.call('GET', fenceKey) or '', waiting }
local live = {}
for _, permit in ipairs(state.permits) do live[#live + 1] = permit end
table.sort(live, function(a, b) return a.expires < b.expires end)
for _, permit in ipairs(live) do
  reply[#reply + 1] = permit.mode
  reply[#reply + 1] = permit.expires - now
  reply[#reply + 1] = text(permit.fence)
  reply[#reply + 1] = permit.holder
end
return reply
`,
);
