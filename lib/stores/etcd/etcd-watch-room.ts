import type { NotifiableWatch } from '../shared/notifiable-watch.js';
import type { EtcdWatchRequest, EtcdWatchResponse } from './etcd-client.js';

/** What to watch: every key of one resource, and which of their deletions can let us in. */
export interface WatchedRoom {
  readonly start: Buffer;
  readonly end: Buffer;
  /** The resource's lease key: its deletion (a release, an expiry) wakes the waiters. */
  readonly lock: Buffer;
  /**
   * Whether a waiter's place, created at this revision and now gone, stood ahead of ours in the line (so its
   * leaving may make us first). Places behind ours, and our own, wake nobody.
   */
  readonly wasAhead: (createRevision: string) => boolean;
}

/** Where a new watch starts: after a revision the caller saw, from a time it knows nothing was missed since. */
export interface WatchStart {
  readonly afterRevision: string;
  readonly since: number;
}

/** One resource watched on the stream: its etcd watch, the waiters it wakes, and what it has seen. */
export interface Room {
  readonly target: WatchedRoom;
  readonly watches: Set<NotifiableWatch>;
  /** The watch id etcd gave, once created. */
  watchId?: string;
  created: Promise<void>;
  markCreated?: () => void;
  failCreated?: (error: Error) => void;
  /** The last revision this room's watch is known to have seen everything up to. */
  revision?: string;
  /** `performance.now()` from which on no event of the room was missed. */
  listeningSince?: number;
  /** `performance.now()` of the last deletion heard. */
  lastRelease?: number;
  idle?: NodeJS.Timeout;
}

/** A room not yet watched: `created` settles once etcd confirms its watch, or its stream fails first. */
export function newRoom(target: WatchedRoom, start?: WatchStart): Room {
  const room: Room = {
    target,
    watches: new Set(),
    created: Promise.resolve(),
    revision: start?.afterRevision,
  };
  room.created = new Promise<void>((resolve, reject) => {
    room.markCreated = resolve;
    room.failCreated = reject;
  });
  room.created.catch(() => undefined);
  return room;
}

/** The key rooms are found by: the first key of the resource. */
export function roomId(target: WatchedRoom): string {
  return target.start.toString('latin1');
}

/** The request that watches `room` from the revision after the last one it saw (from now on if none). */
export function createRequest(room: Room): { request: EtcdWatchRequest; startRevision?: string } {
  const startRevision = room.revision === undefined ? undefined : String(BigInt(room.revision) + 1n);
  const request: EtcdWatchRequest = {
    create_request: {
      key: room.target.start,
      range_end: room.target.end,
      ...(startRevision ? { start_revision: startRevision } : {}),
      filters: ['Noput'],
      prev_kv: true,
    },
  };
  return { request, startRevision };
}

/** Whether the events can let a waiter in: the lease key deleted, or a place ahead of ours gone. */
export function isRelease(target: WatchedRoom, events: EtcdWatchResponse['events']): boolean {
  const { lock, wasAhead } = target;
  return events.some(
    (event) =>
      event.type === 'Delete' &&
      (Buffer.from(event.kv.key).equals(lock) ||
        // a place whose record we did not get counts as one ahead: a needless wake costs one attempt
        event.prev_kv === undefined ||
        event.prev_kv === null ||
        wasAhead(event.prev_kv.create_revision)),
  );
}
