import { FENCE_LUA } from '../../scripts/fence.lua.js';
import { luaScript, type LuaScript } from '../../scripts/lua-script.js';
import { PERMIT_LUA } from './permit.lua.js';
import { PERMIT_STATE_LUA } from './permit-state.lua.js';

/**
 * A permit script: its own Lua after the prelude every permit script shares (permit.lua.ts), the reading and
 * writing of the resource's permit state (permit-state.lua.ts) and the fence rule of the resource's mutex leases
 * (fence.lua.ts), run by EVALSHA.
 */
export function permitScript(name: string, lua: string): LuaScript {
  return luaScript(name, `${FENCE_LUA}${PERMIT_STATE_LUA}${PERMIT_LUA}\n${lua.trim()}`);
}

/** How a permit script that may call the line tells the processes whose places it reserved. */
export interface PermitNotices {
  /** How long a freed permit stays reserved for its place, in ms. */
  readonly handoffWindow: number;
  /** 'PUBLISH', 'SPUBLISH', or '' to send no notice. */
  readonly publish: string;
  /** The resource's release channel. */
  readonly channel: string;
}

/** The trailing ARGV of every permit script that may call the line: window, publish command, channel. */
export function noticeArgs(notices: PermitNotices): Array<string | number> {
  return [notices.handoffWindow, notices.publish, notices.channel];
}
