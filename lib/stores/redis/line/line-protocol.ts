import type { AcquireRequest } from '../../../interfaces/lease.interface.js';

/*
 * The protocol of a key's line of waiting processes, on the TypeScript side. A resource's line is the list
 * `{base}:waiters` (resource-keys.ts): one entry per process in the order they were refused, its owner id and,
 * when it left one, its offer (line-entries.lua.ts). The Lua side is ../scripts/acquire.script.ts (places,
 * offers, marks), release-to-waiters.lua.ts (reservations, direct grants, notices), hand-over.script.ts and
 * leave-line.script.ts: what is written here must match what they write and read. RedisLine (redis-line.ts) is
 * the line as the engine sees it.
 */

/** How the line, its reservations and its notices name a process: an owner id as newOwnerId makes it. */
const OWNER_ID = '[0-9a-f]{16}';

/** Leads a lease that a refused waiter marked: only a marked lease's release looks at the line and tells. */
export const WAITED_FOR = '!';
/** Leads a reservation of the key for the process first in line (`>owner`), for the hand-off window. */
export const RESERVED_FOR = '>';
/** Leads a reservation of the key against the releasing process (`~owner`), so that a waiter elsewhere wins. */
export const RESERVED_AGAINST = '~';
/**
 * What the lock key holds while permits of the resource live (`#`, `!#` once a mutex caller waits), as long
 * as the longest of them: no mutex lease beside permits (../permits/scripts/permit.lua.ts keeps it).
 */
export const PERMITS_GUARD = '#';

/** How an acquire stands towards the key's line (ACQUIRE's ARGV 6). */
export const LINE_MODE = {
  /** Stays out of the line: no wait, or no line (the hand-off window or the notices are off; Redlock). */
  stayOut: '0',
  /** Takes a place at the end of the line when refused. */
  joinWhenRefused: '1',
  /** Takes a place when refused, and gives it up when granted: the caller may stand in the line already. */
  leaveWhenGranted: '2',
} as const;

/** One of {@link LINE_MODE}'s codes. */
export type LineMode = (typeof LINE_MODE)[keyof typeof LINE_MODE];

/** The line mode of a request to a store that keeps a line: a waiter asking again may have a place to give up. */
export function lineModeOf(waiting: AcquireRequest['waiting']): LineMode {
  if (!waiting) return LINE_MODE.stayOut;
  return waiting.again ? LINE_MODE.leaveWhenGranted : LINE_MODE.joinWhenRefused;
}

/** The least a key's line lives after it starts, in ms: places of waiters that left go with it once quiet. */
const LINE_TTL = 60_000;

/** How long a new line lives for a request (ACQUIRE's ARGV 7): at least {@link LINE_TTL}, or the rest of its wait. */
export function lineTtlOf(waiting: AcquireRequest['waiting']): number {
  return Math.max(LINE_TTL, Math.ceil(waiting?.ttl ?? 0));
}

/**
 * RELEASE's count of the releaser's own listeners (ARGV 6) when the line is on: every waiting process then
 * stands in the line, so any listener is a subscription lingering after a wait, and none may hold the key back.
 */
export const UNCOUNTED_LISTENERS = Number.MAX_SAFE_INTEGER;

/**
 * The offer a waiter in the line leaves in its process's entry (ACQUIRE's ARGV 9), under `version` (see
 * DirectGrants): 'version token ttl fencing holder', as RELEASE reads it to grant the lease directly.
 */
export function encodeOffer(version: number, request: AcquireRequest): string {
  return `${version} ${request.token} ${request.ttl} ${request.fencing ? '1' : '0'} ${request.holder ?? ''}`;
}

/** The channel on which a process in the line hears what is for it alone: direct grants, its turn next. */
export function ownChannel(channel: string, owner: string): string {
  return `${channel}:${owner}`;
}

/** What a release notice says to the processes that hear it. */
export type LineNotice =
  /** `=version fence`, on the process's own channel: the release granted the offer of that version. */
  | { readonly kind: 'granted'; readonly version: number; readonly fence: number }
  /**
   * `owner` or `owner next`: the key is reserved for `owner`; `next` stands after it in the line. With a count
   * (`owner:count`, from a permit script) permits were reserved for that many of `owner`'s places: that many of
   * its waiters are to wake, not all.
   */
  | { readonly kind: 'reserved'; readonly owner: string; readonly next?: string; readonly count?: number }
  /** Anything else (`*`): released, for every waiter. */
  | { readonly kind: 'released' };

const GRANTED = /^=(\d+) (\d+)$/;
const RESERVED = new RegExp(`^(${OWNER_ID})(?::([1-9]\\d*))?(?: (${OWNER_ID}))?$`);

/** Reads a release notice. */
export function readNotice(message: string): LineNotice {
  const granted = GRANTED.exec(message);
  if (granted) return { kind: 'granted', version: Number(granted[1]), fence: Number(granted[2]) };
  const reserved = RESERVED.exec(message);
  if (reserved) {
    const [, owner, count, next] = reserved;
    return {
      kind: 'reserved',
      owner,
      ...(next === undefined ? {} : { next }),
      ...(count === undefined ? {} : { count: Number(count) }),
    };
  }
  return { kind: 'released' };
}
