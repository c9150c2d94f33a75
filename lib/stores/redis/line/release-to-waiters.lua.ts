/**
 * Lua shared by the scripts that release a marked lease (the token was checked): someone waited for it.
 * When processes stand in the key's line, the one that has waited longest gets the key: when its entry holds an
 * offer (its waiter's token, ttl, fencing and holder record; see ACQUIRE and line-entries.lua.ts), the lease is
 * granted to that waiter right here and the notice on that process's own channel (`<channel>:<owner>`) says so ('=version
 * fence'), so the waiter starts without another request; when nobody listens on that channel (PUBLISH
 * answers 0: the process is gone) the grant is undone at once and the next in line is asked. A place without
 * an offer gets the key reserved ('>owner') for the hand-off window and a notice on the key's channel that
 * names it ('owner', or 'owner next' with the one after it), so only it wakes. With the line empty, when
 * waiters elsewhere heard the notice ('*'), the key is reserved briefly ('~owner') against this owner so that
 * one of them wins instead of this process re-taking it. line-protocol.ts encodes and reads all of these.
 * Returns the token and ttl of the lease it granted directly, if it did (the releaser may know that lease's end
 * without asking: see ACQUIRE's ARGV 10).
 * Needs LINE_ENTRIES_LUA before it. w: lock, fence, line (keys); channel, publish, owner, window, ownListeners.
 */
export const RELEASE_TO_WAITERS_LUA = `
local function releaseToWaiters(w)
  if tonumber(w.window) > 0 then
    -- a few departed processes in a row are passed over in this call; more wait for their next look
    for _ = 1, 8 do
      local entry = redis.call('LPOP', w.line)
      if not entry then break end
      local nextOwner, offer = string.match(entry, '^(%x+) ?(.*)$')
      if nextOwner and offer ~= '' and w.publish ~= '' then
        local version, token, ttl, fencing, holder = string.match(offer, '^(%d+) (%x+) (%d+) ([01]) ?(.*)$')
        if version then
          -- marked whether or not others still wait (no LLEN on the hand-off path): a release that finds the
          -- line empty costs a look and a notice nobody hears, once at the end of a busy spell
          local fence = grant(w.lock, w.fence, leaseValue(token, holder), ttl, fencing, true)
          if type(fence) ~= 'table' then
            local notice = '=' .. version .. ' ' .. string.format('%.0f', fence)
            local heard = redis.pcall(w.publish, w.channel .. ':' .. nextOwner, notice)
            if type(heard) == 'number' and heard > 0 then return token, tonumber(ttl) end
            redis.call('DEL', w.lock)
          end
        end
      elseif nextOwner then
        redis.call('SET', w.lock, '>' .. nextOwner, 'PX', w.window)
        if w.publish ~= '' then
          -- the notice also names who stands next, which looks again once the window is over, should the
          -- reserved process never come (it died while waiting)
          local after = redis.call('LINDEX', w.line, 0)
          if after then after = entryOwner(after) end
          local notice = nextOwner
          if after then notice = nextOwner .. ' ' .. after end
          -- pcall: a user whose ACL refuses the channel still releases; its waiters fall back to their backoff
          redis.pcall(w.publish, w.channel, notice)
          -- the one next may listen on its own channel only (it left an offer)
          if after then redis.pcall(w.publish, w.channel .. ':' .. after, notice) end
        end
        return
      end
    end
  end
  local listeners = 0
  if w.publish ~= '' then
    local published = redis.pcall(w.publish, w.channel, '*')
    if type(published) == 'number' then listeners = published end
  end
  if listeners > tonumber(w.ownListeners) and tonumber(w.window) > 0 then
    redis.call('SET', w.lock, '~' .. w.owner, 'PX', w.window)
  else
    redis.call('DEL', w.lock)
  end
end
`;
