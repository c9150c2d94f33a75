import { permitScript } from './permit-script.js';

/**
 * Reads a resource's permits without changing anything (ended ones are left for the next write to prune).
 *
 * KEYS: 1 permits, 2 info, 3 line, 4 fence, 5 lock, 6 mutexLine (permit.lua.ts says what each holds).
 * ARGV: none.
 * Returns {shape or '', fence counter or '', places that hold someone back, then per live permit, soonest end first: mode,
 * remaining ms, fence (0 for none), holder record ('' for none)}.
 */
export const PERMIT_INSPECT = permitScript(
  'permit-inspect',
  `
local places = {}
local tokens, read = readLine()
for index = 1, #tokens do
  if read[index] then places[#places + 1] = read[index] end
end
passOverGone(places)
local waiting = 0
for _, place in ipairs(places) do
  if not place.lapsed then waiting = waiting + 1 end
end
local reply = { redis.call('HGET', infoKey, 'shape') or '', redis.call('GET', fenceKey) or '', waiting }
local live = redis.call('ZRANGEBYSCORE', permitsKey, '(' .. text(now), '+inf', 'WITHSCORES')
for i = 1, #live, 2 do
  local record = redis.call('HGET', infoKey, 'p:' .. live[i]) or ''
  local mode, fence, holder = string.match(record, '^(%a):(%d+):(.*)$')
  reply[#reply + 1] = mode or ''
  reply[#reply + 1] = tonumber(live[i + 1]) - now
  reply[#reply + 1] = fence or '0'
  reply[#reply + 1] = holder or ''
end
return reply
`,
);
