import { isOne } from '../client/reply.js';
import { GRANT_LUA } from './grant.lua.js';
import { LEASE_LUA } from './lease.lua.js';
import { luaScript } from './lua-script.js';
import { LINE_ENTRIES_LUA } from '../line/line-entries.lua.js';
import { RELEASE_TO_WAITERS_LUA } from '../line/release-to-waiters.lua.js';

/**
 * Releases the lease only while the token holds it. An unmarked lease nobody waited for is one DEL; a marked
 * one tells its waiters in the same step (release-to-waiters.lua.ts). A store that expects no waiter tries
 * RELEASE_UNMARKED first (release-unmarked.script.ts), which needs none of the arguments below.
 *
 * KEYS: 1 lock, 2 fence, 3 line.
 * ARGV: 1 token; 2 channel; 3 publish command ('PUBLISH', 'SPUBLISH' or '' for none); 4 owner id; 5 hand-off
 * window ms; 6 how many listeners of the notice may hear it before the key is held back from the releaser
 * (its own subscriber: 0 or 1; with the line on, every waiter is in the line, so a huge number: subscribers
 * that linger after their wait must not hold the key back).
 * Returns 0 when the lease was not ours any more, 1 when released and nobody had marked it, 2 when released and
 * its waiters told, {2, token, ttl ms} when released and granted straight to the waiter of that token (see
 * {@link isReleased} and {@link wasMarked}).
 */
export const RELEASE = luaScript(
  'release',
  `${LEASE_LUA}${GRANT_LUA}${LINE_ENTRIES_LUA}${RELEASE_TO_WAITERS_LUA}
local own = ownership(redis.call('GET', KEYS[1]), ARGV[1])
if own == 0 then return 0 end
if own == 1 then
  redis.call('DEL', KEYS[1])
  return 1
end
local granted, ttl = releaseToWaiters({
  lock = KEYS[1], fence = KEYS[2], line = KEYS[3],
  channel = ARGV[2], publish = ARGV[3], owner = ARGV[4], window = ARGV[5], ownListeners = ARGV[6],
})
if granted then return {2, granted, ttl} end
return 2
`,
);

/** Who releases, and how its release tells the waiters: RELEASE's ARGV after the token. */
export interface ReleaseCall {
  /** The key's release channel. */
  readonly channel: string;
  /** 'PUBLISH', 'SPUBLISH', or '' to send no notice. */
  readonly publish: string;
  /** The releasing store's owner id. */
  readonly owner: string;
  /** ms the key is reserved for the process first in line, or against the releaser; 0 for none. */
  readonly handoffWindow: number;
  /** How many listeners of the notice are the releaser's own (UNCOUNTED_LISTENERS with the line on). */
  readonly ownListeners: number;
}

/** The ARGV of {@link RELEASE} for `token`, in the order the script reads them. */
export function releaseArgs(token: string, call: ReleaseCall): Array<string | number> {
  return [token, call.channel, call.publish, call.owner, call.handoffWindow, call.ownListeners];
}

/** The lease a release granted straight to a waiter elsewhere: its token and ttl (see {@link RELEASE}). */
export interface PassedOnLease {
  readonly token: string;
  readonly ttl: number;
}

/** Whether a reply of {@link RELEASE} says the lease was released (whether or not it was passed on). */
export function isReleased(reply: unknown): boolean {
  return Array.isArray(reply) || isOne(reply) || wasMarked(reply);
}

/** Whether a reply of {@link RELEASE} says a waiter had marked the lease it released: others want the key. */
export function wasMarked(reply: unknown): boolean {
  return Array.isArray(reply) || Number(reply) === 2;
}

/** The lease a reply of {@link RELEASE} says it granted to a waiter elsewhere, if it did. */
export function passedOnLease(reply: unknown): PassedOnLease | undefined {
  if (!Array.isArray(reply) || reply.length < 3) return undefined;
  return { token: String(reply[1]), ttl: Number(reply[2]) };
}
