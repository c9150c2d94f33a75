import type { PermitMode } from './permit-store.interface.js';

/** Who holds a lock: written beside the lease when it was granted. Never the token. */
export interface LockHolder {
  /** Host name of the process that holds it. */
  readonly host: string;
  /** Process id of that process. */
  readonly pid: number;
  /** What holds it: `Class.method` for `@WithLock`, the `label` option for direct calls. */
  readonly label?: string;
  /** When the lease was granted, by the holder's clock. */
  readonly acquiredAt: Date;
}

/**
 * What `inspect()` tells about a lock: whether it is held, for how long, its fence and its holder; for a key
 * used with permits (`limit` or `mode`), also how many hold one and the key's shape.
 */
export interface LockInfo {
  readonly held: boolean;
  /** Remaining lease in ms while held (with permits: of the longest-lived one). */
  readonly remainingTtl?: number;
  /** The last fence granted for this resource, when fencing has been used on it. */
  readonly fence?: number;
  /** Who holds it, while held by a holder that recorded itself (every `LockManager` does); with permits, the
   * holder of the longest-lived one. */
  readonly holder?: LockHolder;
  /** With permits: how many are held right now. */
  readonly holders?: number;
  /** With permits: the semaphore's limit, while the key is in use as one. */
  readonly limit?: number;
  /** With permits: on a readers-writer key in use, `write` while a writer holds it, else `read`. */
  readonly mode?: PermitMode;
}
