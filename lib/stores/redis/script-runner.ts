import type { RedisClientPort } from './client/redis-client-port.js';
import type { LuaScript } from './scripts/lua-script.js';

type Client = RedisClientPort;
type Reply = unknown;

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/**
 * Runs a script by EVALSHA and falls back to EVAL (which also caches it again) when the server has
 * forgotten it: after SCRIPT FLUSH, a restart, or a failover to a node that never saw it.
 */
export async function runScript(
  client: Client,
  script: LuaScript,
  keys: string[],
  args: Array<string | number>,
): Promise<Reply> {
  try {
    return await client.evalsha(script.sha, keys.length, ...keys, ...args);
  } catch (error) {
    return evalAfterNoScript(client, script, { keys, args, error });
  }
}

/** A script's EVALSHA that failed: its keys, its arguments and the error. */
export interface FailedScriptCall {
  readonly keys: string[];
  readonly args: Array<string | number>;
  readonly error: unknown;
}

/**
 * What follows an EVALSHA that failed: EVAL of the same call when the server had forgotten the script, else
 * the failure itself. For a caller that sends the EVALSHA itself (the uncontended release: no async layer).
 */
export async function evalAfterNoScript(client: Client, script: LuaScript, call: FailedScriptCall): Promise<Reply> {
  if (!isNoScript(call.error)) throw call.error;
  return client.eval(script.lua, call.keys.length, ...call.keys, ...call.args);
}

/** One call of a batch: the keys and arguments of one script run. */
export interface ScriptCall {
  readonly keys: string[];
  readonly args: Array<string | number>;
}

/**
 * Runs many calls of one script in a single pipeline (one round trip); calls that met NOSCRIPT are
 * retried with EVAL. Each entry is the reply or the error of that call.
 */
export async function runScriptBatch(
  client: Client,
  script: LuaScript,
  calls: readonly ScriptCall[],
): Promise<unknown[]> {
  const pipeline = client.pipeline();
  for (const call of calls) pipeline.evalsha(script.sha, call.keys.length, ...call.keys, ...call.args);
  const replies = (await pipeline.exec()) ?? [];
  return Promise.all(
    calls.map(async (call, index) => {
      const [error, reply] = replies[index] ?? [new Error('no reply in pipeline'), undefined];
      if (!error) return reply;
      if (!isNoScript(error)) return error;
      try {
        return await client.eval(script.lua, call.keys.length, ...call.keys, ...call.args);
      } catch (retryError) {
        return retryError;
      }
    }),
  );
}
