/** A cluster node as `CLUSTER SLOTS` names it. */
export interface NodeAddress {
  readonly host: string;
  readonly port: number;
}

/** Which master serves each slot, and the masters, as a cluster's `CLUSTER SLOTS` says. */
export interface ClusterTopology {
  /** By slot: `[host:port]` of its master, `undefined` for a slot no master serves. */
  readonly slots: ReadonlyArray<readonly string[] | undefined>;
  readonly masters: readonly NodeAddress[];
}

/** What a cluster client knows before it has asked: nothing, so each slot is its own group. */
export const UNKNOWN_TOPOLOGY: ClusterTopology = { slots: [], masters: [] };

/**
 * The topology in a `CLUSTER SLOTS` reply: entries `[first slot, last slot, [host, port, id], ...replicas]`.
 * GLIDE routes every command by itself; the store needs the masters only to ask each of them (checks,
 * listing) and to batch renewals by node.
 */
export function readClusterSlots(reply: unknown): ClusterTopology {
  const slots: Array<string[] | undefined> = [];
  const masters = new Map<string, NodeAddress>();
  for (const entry of Array.isArray(reply) ? (reply as unknown[]) : []) {
    if (!Array.isArray(entry) || !Array.isArray(entry[2])) continue;
    const [first, last, [host, port]] = entry as [unknown, unknown, unknown[]];
    const master = { host: String(host), port: Number(port) };
    const address = `${master.host}:${master.port}`;
    masters.set(address, master);
    for (let slot = Number(first); slot <= Number(last); slot++) slots[slot] = [address];
  }
  return { slots, masters: [...masters.values()] };
}
