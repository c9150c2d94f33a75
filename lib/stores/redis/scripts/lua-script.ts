import { createHash } from 'node:crypto';

/** A Lua script with its SHA1, so it runs by EVALSHA and is sent whole only when the server lacks it. */
export interface LuaScript {
  readonly name: string;
  readonly lua: string;
  readonly sha: string;
}

/** A script named `name` from its Lua source, trimmed: the SHA1 is of exactly the text that is sent. */
export function luaScript(name: string, lua: string): LuaScript {
  const body = lua.trim();
  return { name, lua: body, sha: createHash('sha1').update(body).digest('hex') };
}
