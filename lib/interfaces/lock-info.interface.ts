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

/** What `inspect()` tells about a lock: whether it is held, for how long, its fence and its holder. */
export interface LockInfo {
  readonly held: boolean;
  /** Remaining lease in ms while held. */
  readonly remainingTtl?: number;
  /** The last fence granted for this resource, when fencing has been used on it. */
  readonly fence?: number;
  /** Who holds it, while held by a holder that recorded itself (every `LockManager` does). */
  readonly holder?: LockHolder;
}
