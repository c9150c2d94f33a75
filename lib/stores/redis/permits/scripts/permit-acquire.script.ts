import type { PermitRequest, PermitShape } from '../../../../interfaces/permit-store.interface.js';
import { MAX_DURATION } from '../../../../utils/duration.js';
import { modeCode, shapeText } from '../../../shared/permit-codes.js';
import { noticeArgs, permitScript, type PermitNotices } from './permit-script.js';

/**
 * Grants a permit when the request fits beside the holders and every place before it in the line (a place
 * of its own, or behind the whole line when it has none); a retry of a live permit's token is answered as the
 * first time. A refused request that waits takes a place at the end of the line (or keeps its own).
 *
 * KEYS: 1 state, 2 fence, 3 lock, 4 mutexLine (permit.lua.ts says what each holds).
 * ARGV: 1 token; 2 ttl ms; 3 fencing ('1'/'0'); 4 holder record ('' for none); 5 shape ('limit:N' or 'rw');
 * 6 mode ('p', 'r' or 'w'); 7 place ms (the rest of the wait; '0' takes no place); 8 owner id; 9 hand-off
 * window ms; 10 publish command ('PUBLISH', 'SPUBLISH' or '' for none); 11 channel; 12 offer version ('0' for
 * none): a refused request that waits leaves its terms with its place, under this version, so that a
 * release can grant it the permit directly and tell its process which request that was; 13 listening ('1'/'0'):
 * the process hears its own channel now, so a grant's notice that reaches nobody later means it is gone.
 * Returns {1, fence or 0} on a grant, {0, ms until something holding it back ends or -1, places ahead or -1}
 * on a refusal, {2, shape in use} when the resource is in use with another shape.
 */
export const PERMIT_ACQUIRE = permitScript(
  'permit-acquire',
  `
local token, ttl, fencing, holder = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local shape, mode, placeTtl, owner = ARGV[5], ARGV[6], tonumber(ARGV[7]), ARGV[8]
local window, publish, channel, version = tonumber(ARGV[9]), ARGV[10], ARGV[11], ARGV[12]
local listening = ARGV[13] == '1'
-- the offer this request leaves with its place when refused
local offer = nil
if version ~= '0' and placeTtl > 0 then offer = version .. ' ' .. text(ttl) .. ' ' .. fencing .. ' ' .. holder end
readResource(token)
-- our own live permit: a retry whose first reply was lost; refresh it and answer as the first time
local own = state.own
if own then
  own.expires = now + ttl
  if holder ~= '' then own.holder = holder end
  state.changed = true
  coverPermit(ttl)
  saveResource()
  return {1, own.fence}
end
local places = liveLine()
local stored = state.shape
-- the shape stays while a permit or a place exists: a caller that disagrees is told, never let in
if stored and stored ~= shape and (#places > 0 or #state.permits > 0) then
  saveResource()
  return {2, stored}
end
local position
for index, place in ipairs(places) do
  if place.token == token then position = index end
end
-- back after its reservation lapsed: it takes its turn again from its place
if position and places[position].lapsed then
  places[position].lapsed, places[position].reservedUntil = false, 0
  savePlace(places[position])
end
answerReservations(places, owner, token)
local limit = limitOf(shape)
local mutexTtl = mutexHoldTtl()
local line = callLine(places, limit, window, function() return mutexTtl ~= -2 end,
  { publish = publish, channel = channel, caller = token })
notify(line, places, publish, channel, token, owner)
local admitted
if position then
  admitted = line.fitting[token]
elseif mutexTtl == -2 and not line.stopped then
  local count, writer = line.count, line.writer
  if count == nil then count, writer = holders(limit) end
  admitted = fits(limit, mode, count, writer)
end
if admitted then
  -- the fence first: a counter that is not ours fails the grant before anything is written
  local fence = 0
  if fencing == '1' then
    fence = nextFence(fenceKey)
    if type(fence) == 'table' then
      saveResource()
      return fence
    end
  end
  if position then dropPlace(token) end
  -- written with what this call keeps (a permit, a place): a resource with neither keeps no shape
  state.shape = shape
  addPermit(token, mode, ttl, fence, holder)
  coverPermit(ttl)
  saveResource()
  return {1, fence}
end
if placeTtl > 0 then markMutexLease(mutexTtl) end
if position and placeTtl > 0 then
  places[position].untilMs = now + placeTtl
  places[position].offerText = offer
  places[position].listening = listening
  savePlace(places[position])
elseif not position and placeTtl > 0 then
  local place = { token = token, mode = mode, untilMs = now + placeTtl, reservedUntil = 0, owner = owner,
    answered = false, offerText = offer, listening = listening, lapsed = false }
  state.places[#state.places + 1] = place
  state.shape = shape
  state.changed = true
  places[#places + 1] = place
  position = #places
end
saveResource()
-- how soon something holding it back ends by itself: a permit, a reservation, the mutex lease
local soonest = -1
local firstEnd = soonestPermitEnd()
if firstEnd then soonest = firstEnd - now end
for _, place in ipairs(places) do
  local left = place.reservedUntil - now
  if place.reservedUntil > 0 and not place.lapsed and (soonest < 0 or left < soonest) then soonest = left end
end
if mutexTtl >= 0 and (soonest < 0 or mutexTtl < soonest) then soonest = mutexTtl end
-- the places before ours that hold it back (lapsed ones do not)
local ahead = -1
if position then
  ahead = 0
  for index = 1, position - 1 do
    if not places[index].lapsed then ahead = ahead + 1 end
  end
end
return {0, soonest, ahead}
`,
);

/**
 * The ARGV of {@link PERMIT_ACQUIRE} for a request of `owner` (its shape checked), in the order the script reads
 * them; `version` names the offer a refused waiter leaves (0: none, its process hears no notices); `listening`:
 * the process hears its own channel of the key now (see ARGV 13).
 */
export function permitAcquireArgs(
  request: PermitRequest,
  shape: PermitShape,
  owner: string,
  notices: PermitNotices,
  version: number,
  listening: boolean,
): Array<string | number> {
  return [
    request.token,
    request.ttl,
    request.fencing ? '1' : '0',
    request.holder ?? '',
    shapeText(shape),
    modeCode(shape),
    request.waiting ? Math.min(MAX_DURATION, Math.max(1, Math.ceil(request.waiting.ttl))) : 0,
    owner,
    ...noticeArgs(notices),
    version,
    listening ? '1' : '0',
  ];
}
