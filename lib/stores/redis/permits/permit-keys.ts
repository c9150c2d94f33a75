import { resourceKeys } from '../resource-keys.js';

/** The Redis names of one resource's permits, beside its mutex names and on the same Cluster slot. */
export interface PermitKeys {
  /** Sorted set of the live permits: token -> expiry in ms of the server clock. */
  readonly permits: string;
  /** Hash of the resource's shape, permit records and waiting places (see scripts/permit.lua.ts). */
  readonly info: string;
  /** Sorted set of the waiting places in order of arrival. */
  readonly line: string;
  /** The resource's fence counter, shared with its mutex leases. */
  readonly fence: string;
  /** The resource's mutex lease, which no permit may be granted beside. */
  readonly lock: string;
  /** The resource's release channel, shared with its mutex leases. */
  readonly channel: string;
  /** The mutex's line of waiting processes (redis/line/line-protocol.ts), told when the last permit ends. */
  readonly mutexLine: string;
}

/**
 * Lays out the permit keys of a resource after the mutex's (resource-keys.ts): the same hash tag, so every
 * key of one resource, mutex and permits, shares one Cluster slot and one script may touch them all.
 */
export function permitKeys(prefix: string, key: string): PermitKeys {
  const resource = resourceKeys(prefix, key);
  return {
    permits: `${resource.lock}:permits`,
    info: `${resource.lock}:permit-info`,
    line: `${resource.lock}:permit-line`,
    fence: resource.fence,
    lock: resource.lock,
    channel: resource.channel,
    mutexLine: resource.line,
  };
}

/** The KEYS of every permit script, in their order. */
export function permitScriptKeys(keys: PermitKeys): string[] {
  return [keys.permits, keys.info, keys.line, keys.fence, keys.lock, keys.mutexLine];
}
