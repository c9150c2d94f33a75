/** A lease a worker holds. */
export interface Held {
  release(): Promise<void>;
}

/** What one worker (or one process, for a shared session) opens of a contender: its clients and objects. */
export interface Session {
  /** Takes `key`, waiting while someone else holds it; library-level give-ups are retried and counted. */
  acquire(key: string): Promise<Held>;
  /** Library-level failures retried so far (redlock's retry budget, a timeout). */
  retries: number;
  close(): Promise<void>;
}

/**
 * The families of scenarios a contender takes part in: `uncontended` (1, 2), `in-process` (8 workers of one
 * process, 3 and 4), `processes` (8 forked processes, 5 and 6).
 */
export type Role = 'uncontended' | 'in-process' | 'processes';

/** A contender of the bench: a library driven through its lock primitive, or a variant of ours. */
export interface Library {
  readonly name: string;
  /** In-process workers share one session (one LockManager per process, as a Nest app has one). */
  readonly shared: boolean;
  readonly roles: readonly Role[];
  /** The hand-written floor, this project (or a variant of it), or another library: targets compare them so. */
  readonly kind: 'floor' | 'ours' | 'peer';
  /** Shown under the contention tables: what waiting means for this contender, and how it is driven. */
  readonly waiting: string;
  open(url: string): Promise<Session>;
}

/** Every role: what a peer library takes part in. */
export const ALL_ROLES: readonly Role[] = ['uncontended', 'in-process', 'processes'];

/** Lease length for every contender that takes one as an argument (redis-semaphore keeps its own default). */
export const TTL = 30_000;
/** Library-level give-ups (each several seconds long) after which a worker stops trying. */
const MAX_RETRIES = 20;

/**
 * A session whose `acquire` runs `take` until it succeeds, counting in `retries` the library's give-ups that
 * `givesUp` recognises; every contender goes through it, so the bench's own cost per acquisition is alike for all.
 */
export function retryingSession(
  givesUp: (error: unknown) => boolean,
  take: (key: string) => Promise<Held>,
  close: () => Promise<void>,
): Session {
  const session: Session = {
    retries: 0,
    async acquire(key) {
      for (;;) {
        try {
          return await take(key);
        } catch (error) {
          if (!givesUp(error) || ++session.retries > MAX_RETRIES) throw error;
        }
      }
    },
    close,
  };
  return session;
}

/**
 * Holds a lease that a library only grants for the length of a callback (`using()`, `runWithLock()`):
 * resolves once the callback runs, and its `release()` ends the callback and waits for the library's release.
 */
export function heldByCallback(run: (inside: () => Promise<void>) => Promise<unknown>): Promise<Held> {
  return new Promise((resolve, reject) => {
    const done = run(
      () =>
        new Promise<void>((finish) =>
          resolve({
            release: async () => {
              finish();
              await done;
            },
          }),
        ),
    );
    done.catch(reject);
  });
}
