/**
 * Whether a script's or command's reply is the integer 1, however the client decoded it: a number (ioredis,
 * node-redis over RESP2 or RESP3), a bigint, a string or a Lua `true`. Never `=== 1` on a raw reply.
 */
export function isOne(reply: unknown): boolean {
  return reply === true || (reply !== null && reply !== undefined && reply !== false && Number(reply) === 1);
}
