import type { Etcd3Client } from './etcd-client.js';

/** The holder's remaining lease in ms, as etcd tells it (whole seconds, rounded up, within the granted TTL). */
export async function remainingLease(client: Etcd3Client, lease: string): Promise<number | undefined> {
  if (!lease || lease === '0') return undefined;
  const answer = await client.leaseClient.leaseTimeToLive({ ID: lease });
  const ttl = Number(answer.TTL);
  // -1: expired, its keys are being deleted; the watch hears when
  if (ttl < 0) return undefined;
  return Math.min(ttl + 1, Number(answer.grantedTTL)) * 1000;
}
