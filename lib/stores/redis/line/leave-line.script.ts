import { luaScript } from '../scripts/lua-script.js';
import { LINE_ENTRIES_LUA } from './line-entries.lua.js';
import { PERMITS_GUARD } from './line-protocol.js';

/**
 * A process gives up its place in a key's line (nobody of it waits for the key any more): its entry goes, with
 * the offer in it. When the line is empty then, a mark a waiter left on the permits' guard ('!#', see
 * permit.lua.ts) goes too: with nobody waiting for the mutex, it would keep every new permit out for as long as
 * the permits that live are renewed.
 *
 * KEYS: 1 line, 2 lock.
 * ARGV: 1 owner id.
 * Returns 1.
 */
export const LEAVE_LINE = luaScript(
  'leave-line',
  `${LINE_ENTRIES_LUA}
leaveLine(KEYS[1], ARGV[1])
if redis.call('LLEN', KEYS[1]) == 0 and redis.call('GET', KEYS[2]) == '!${PERMITS_GUARD}' then
  redis.call('SET', KEYS[2], '${PERMITS_GUARD}', 'KEEPTTL')
end
return 1
`,
);
