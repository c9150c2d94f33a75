import { resourceKeys } from '../resource-keys.js';

/** The Redis names of one resource's permits, beside its mutex names and on the same Cluster slot. */
export interface PermitKeys {
  /**
   * The resource's whole permit state in one value: its shape, its writer, its permits with their records and
   * expiry, the places of its line with their offers (see scripts/permit-state.lua.ts). An earlier version kept
   * a hash here, and its permits and line in two sorted sets beside it.
   */
  readonly state: string;
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
    // the name of the earlier layout's hash: a process of either layout meets WRONGTYPE on the other's value
    state: `${resource.lock}:permit-info`,
    fence: resource.fence,
    lock: resource.lock,
    channel: resource.channel,
    mutexLine: resource.line,
  };
}

/** The KEYS of every permit script, in their order. */
export function permitScriptKeys(keys: PermitKeys): string[] {
  return [keys.state, keys.fence, keys.lock, keys.mutexLine];
}
