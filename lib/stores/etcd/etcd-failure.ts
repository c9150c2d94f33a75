import { describeFailureKind, networkCodeIn } from '../../utils/failure-kind.js';

/** gRPC status names an etcd call fails with, in a few words. */
const STATUSES: Readonly<Record<string, string>> = {
  UNAVAILABLE: 'unavailable',
  DEADLINE_EXCEEDED: 'no answer in time',
  UNAUTHENTICATED: 'authentication refused',
  PERMISSION_DENIED: 'permission denied',
  RESOURCE_EXHAUSTED: 'resource exhausted',
  CANCELLED: 'call cancelled',
};

/**
 * Why an etcd call failed, in words that carry no key, value or credential: which members were tried (the
 * hosts of the store's options) and the gRPC status or network error the last one gave; `undefined` when
 * the error says neither.
 */
export function etcdFailure(error: unknown): string | undefined {
  const message = error instanceof Error ? error.message : '';
  const members = /^no etcd member answered \(([^)]*)\)/.exec(message)?.[1];
  const network = networkCodeIn(message);
  const status = Object.keys(STATUSES).find((name) => message.includes(name));
  const why = network ? describeFailureKind(network) : status && `${STATUSES[status]} (${status})`;
  if (members === undefined) return why;
  return `no etcd member answered (${members})${why ? `: ${why}` : ''}`;
}
