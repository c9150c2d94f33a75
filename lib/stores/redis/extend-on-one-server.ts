import type { RedisClientPort } from './client/redis-client-port.js';
import { runScript, type ScriptCall } from './script-runner.js';
import { EXTEND_MANY } from './scripts/extend-many.script.js';

/**
 * Runs a batch of EXTEND calls (keys: lock; args: token, ttl) as one EXTEND_MANY script run, so a
 * batch of renewals costs the server one script call instead of one per lease. Only for a server that holds
 * every key of the batch (a single server or a Redlock node, not a Cluster, whose keys span slots).
 * Answers like `runScriptBatch(client, EXTEND, calls)`: per call 1 or 0, or the error of that call.
 * @throws what the script run meets as a whole (connection, timeout, permission)
 */
export async function extendOnOneServer(client: RedisClientPort, calls: readonly ScriptCall[]): Promise<unknown[]> {
  const keys = calls.map((call) => call.keys[0]);
  const args = calls.flatMap((call) => call.args);
  const replies = (await runScript(client, EXTEND_MANY, keys, args)) as number[];
  return replies.map((reply) =>
    reply === -1 ? new Error('WRONGTYPE Operation against a key holding the wrong kind of value') : reply,
  );
}
