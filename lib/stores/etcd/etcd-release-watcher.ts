import { performance } from 'node:perf_hooks';
import type { ReleaseWatch } from '../../interfaces/lease.interface.js';
import { raceDeadline } from '../../utils/deadline.js';
import { NotifiableWatch } from '../shared/notifiable-watch.js';
import type { EtcdDuplexStream, EtcdWatchRequest, EtcdWatchResponse, Etcd3Client } from './etcd-client.js';
import type { EtcdMembers } from './etcd-members.js';
import { openOnCurrentMember } from './member-stream.js';
import {
  createRequest,
  isRelease,
  newRoom,
  roomId,
  type Room,
  type WatchedRoom,
  type WatchStart,
} from './etcd-watch-room.js';

type Stream = EtcdDuplexStream<EtcdWatchRequest, EtcdWatchResponse> & { member?: Etcd3Client };

/** How long a release watcher keeps and awaits its watches. */
export interface WatchTiming {
  /** ms a resource stays watched after its last waiter, so a busy key is not watched anew per wait. */
  readonly linger: number;
  /** ms a new watch waits for etcd's confirmation before it is handed out without it. */
  readonly timeout: number;
}

/**
 * One watch stream per store, shared by the waiters of every key: each resource watched by this process is
 * one etcd watch over its keys. A deletion there (the lease released or expired, a waiter ahead of us left
 * the line) wakes the resource's waiters; puts, and places behind ours leaving, wake nobody. Watches resume from the last revision they saw
 * after the stream breaks (or moves to another member with the store), so a release while reconnecting is
 * still heard; a watch whose history was compacted away wakes everybody, since it may have missed something.
 * A watch etcd has not confirmed within the store's timeout is handed out anyway, without coverage: its
 * waiter then asks once more and relies on its timer until the watch is in place.
 */
export class EtcdReleaseWatcher {
  private stream?: Promise<Stream>;
  private readonly rooms = new Map<string, Room>();
  private readonly byWatchId = new Map<string, Room>();
  /** Rooms whose create request was sent and not yet answered, in the order sent (etcd answers in order). */
  private creating: Room[] = [];
  private closed = false;
  private following = false;

  private readonly linger: number;
  private readonly timeout: number;

  /** @param members the store's members */
  constructor(
    private readonly members: () => Promise<EtcdMembers>,
    timing: WatchTiming,
  ) {
    this.linger = timing.linger;
    this.timeout = timing.timeout;
  }

  /** How many watches of this process are open on the resource (one per waiting queue of a manager). */
  watchers(target: WatchedRoom): number {
    return this.rooms.get(roomId(target))?.watches.size ?? 0;
  }

  /** Watches a resource; with `start`, no deletion after `start.afterRevision` is missed. */
  async watch(target: WatchedRoom, since?: number, start?: WatchStart): Promise<ReleaseWatch> {
    if (this.closed) return NotifiableWatch.timerOnly();
    const id = roomId(target);
    let room = this.rooms.get(id);
    if (!room) {
      room = this.createRoom(id, target, start);
    }
    clearTimeout(room.idle);
    room.idle = undefined;
    const watch = new NotifiableWatch((closed) => this.unwatch(id, closed));
    room.watches.add(watch);
    let confirmed: boolean;
    try {
      confirmed = await raceDeadline(
        room.created.then(() => true),
        this.timeout,
        () => false,
      );
    } catch {
      // the stream failed before etcd confirmed the watch: the waiter relies on its backoff timer until it
      // reconnects, and then hears releases again
      room.watches.delete(watch);
      return NotifiableWatch.timerOnly();
    }
    if (since !== undefined && room.lastRelease !== undefined && room.lastRelease >= since) watch.wake();
    if (confirmed) watch.listeningSince = room.listeningSince;
    return watch;
  }

  /** Cancels every watch and ends the stream; waiters wake and fall back to their timers. */
  close(): void {
    this.closed = true;
    for (const room of this.rooms.values()) {
      clearTimeout(room.idle);
      for (const watch of room.watches) watch.wake();
    }
    this.rooms.clear();
    this.byWatchId.clear();
    const stream = this.stream;
    this.stream = undefined;
    void stream?.then(
      (open) => cancel(open),
      () => undefined,
    );
  }

  private createRoom(id: string, target: WatchedRoom, start?: WatchStart): Room {
    const room = newRoom(target, start);
    this.rooms.set(id, room);
    void this.send(room, start?.since);
    return room;
  }

  /** Sends the create request of `room`, starting after the last revision it saw. */
  private async send(room: Room, coveredSince?: number): Promise<void> {
    let stream: Stream;
    try {
      stream = await this.open();
    } catch (error) {
      room.failCreated?.(error as Error);
      if (this.rooms.get(roomId(room.target)) === room) this.rooms.delete(roomId(room.target));
      return;
    }
    if (this.rooms.get(roomId(room.target)) !== room) return;
    const sentAt = performance.now();
    this.creating.push(room);
    const { request, startRevision } = createRequest(room);
    stream.write(request);
    // a watch that starts after a revision the caller saw covers everything since the caller's own time
    room.listeningSince = startRevision && coveredSince !== undefined ? coveredSince : undefined;
    room.markCreated = wrap(room.markCreated, () => {
      room.listeningSince ??= sentAt;
    });
  }

  private open(): Promise<Stream> {
    if (this.stream) return this.stream;
    const opening = this.members().then(async (members) => {
      if (!this.following) {
        this.following = true;
        // the store moved to another member (this one went quiet for a call or a keep-alive): follow it
        members.onMove(
          () =>
            void this.stream?.then(
              (stream) => this.onBroken(stream),
              () => undefined,
            ),
        );
      }
      return openOnCurrentMember(members, async (member) => (await member.watchClient.watch()) as Stream);
    });
    this.stream = opening;
    opening.then(
      (stream) => {
        stream.on('data', (response) => this.onResponse(response));
        stream.on('error', () => this.onBroken(stream, stream.member));
        stream.on('end', () => this.onBroken(stream, stream.member));
      },
      () => {
        if (this.stream === opening) this.stream = undefined;
      },
    );
    return opening;
  }

  private onResponse(response: EtcdWatchResponse): void {
    if (response.created) {
      const room = this.creating.shift();
      if (!room) return;
      room.watchId = response.watch_id;
      room.revision ??= response.header.revision;
      this.byWatchId.set(response.watch_id, room);
      if (this.rooms.get(roomId(room.target)) !== room) {
        // it was given up while its creation was under way
        void this.stream?.then((stream) => stream.write({ cancel_request: { watch_id: response.watch_id } }));
        this.byWatchId.delete(response.watch_id);
        return;
      }
      room.markCreated?.();
    }
    const room = this.byWatchId.get(response.watch_id);
    if (!room) return;
    if (response.canceled) {
      this.byWatchId.delete(response.watch_id);
      if (this.rooms.get(roomId(room.target)) !== room) return;
      // compacted past our revision (or cancelled by the server): start afresh and let every waiter look again
      room.revision = undefined;
      room.listeningSince = undefined;
      for (const watch of room.watches) watch.wake();
      void this.send(room);
      return;
    }
    if (response.events.length > 0) {
      room.revision = response.header.revision;
      if (isRelease(room.target, response.events)) {
        room.lastRelease = performance.now();
        for (const watch of room.watches) watch.wake();
      }
    }
  }

  /**
   * The stream broke, or the store moved to another member: watch every room again on a new stream, each from
   * the revision it had seen. `failedMember`, the member of a stream that broke, is reported as failed.
   */
  private onBroken(stream: Stream, failedMember?: Etcd3Client): void {
    void this.stream?.then(
      (current) => {
        if (current !== stream || this.closed) return;
        this.stream = undefined;
        cancel(stream);
        if (failedMember) void this.members().then((members) => members.failed(failedMember));
        this.creating = [];
        this.byWatchId.clear();
        for (const room of this.rooms.values()) {
          room.watchId = undefined;
          void this.send(room, room.listeningSince);
        }
      },
      () => undefined,
    );
  }

  private unwatch(id: string, watch: NotifiableWatch): void {
    const room = this.rooms.get(id);
    if (!room || !room.watches.delete(watch) || room.watches.size > 0) return;
    room.idle = setTimeout(() => this.forget(id, room), this.linger);
    room.idle.unref();
  }

  private forget(id: string, room: Room): void {
    if (this.rooms.get(id) !== room || room.watches.size > 0) return;
    this.rooms.delete(id);
    const watchId = room.watchId;
    if (watchId === undefined) return;
    this.byWatchId.delete(watchId);
    void this.stream?.then(
      (stream) => stream.write({ cancel_request: { watch_id: watchId } }),
      () => undefined,
    );
  }
}

function wrap(first: (() => void) | undefined, then: () => void): () => void {
  return () => {
    then();
    first?.();
  };
}

function cancel(stream: Stream): void {
  try {
    stream.cancel();
  } catch {
    // already failed: nothing to cancel
  }
}
