import { luaScript } from '../scripts/lua-script.js';
import { LINE_ENTRIES_LUA } from './line-entries.lua.js';

/**
 * A process gives up its place in a key's line (nobody of it waits for the key any more): its entry goes, with
 * the offer in it.
 *
 * KEYS: 1 line.
 * ARGV: 1 owner id.
 * Returns 1.
 */
export const LEAVE_LINE = luaScript(
  'leave-line',
  `${LINE_ENTRIES_LUA}
leaveLine(KEYS[1], ARGV[1])
return 1
`,
);
