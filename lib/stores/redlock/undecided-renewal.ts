import { LockStoreError } from '../../errors/lock-store.error.js';
import { withoutArguments } from '../redis/store-error.js';
import type { QuorumNodes } from './quorum-nodes.js';
import { countAnswers, type NodeReply } from './quorum-round.js';

/** EXTEND's answers for one lease: 1 extended, 0 another token holds the key, -2 nothing does. */
const EXTENDED = 1;
const HELD_BY_ANOTHER = 0;
const MISSING = -2;

/**
 * The error of a renewal that neither a quorum extended nor its answers lost: the nodes that did not answer
 * could make a quorum with those that extended it. Says what each group of nodes did (extended it, had nothing
 * under the key, had another holder's lease, did not answer and why), never the token or the key: the nodes'
 * own errors lose the command's arguments ioredis attaches.
 * @param replies by node, EXTEND's answer for this lease, or the node's failure
 */
export function undecidedRenewal(
  nodes: QuorumNodes,
  operation: string,
  key: string,
  replies: readonly NodeReply<unknown>[],
): LockStoreError {
  const count = (answer: number) => countAnswers(replies, (value) => value === answer);
  const silent = replies.length - countAnswers(replies);
  const answered = [
    `${count(EXTENDED)} of ${replies.length} Redis nodes extended it`,
    ...nonZero(count(MISSING), 'had nothing under the key (a restart or its expiry there lost it)'),
    ...nonZero(count(HELD_BY_ANOTHER), "had another holder's lease"),
  ];
  const detail =
    `cannot tell whether the lease is still held: ${answered.join(', ')}, and ${silent} did not answer ` +
    `(${nodes.failures(replies)}); ${silent === 1 ? 'that node' : 'those nodes'} may have extended it too, ` +
    `which with the ${count(EXTENDED)} that did would make the quorum of ${nodes.quorum}`;
  const errors = replies.flatMap((reply) =>
    reply.state === 'ok' ? [] : [reply.state === 'failed' ? withoutArguments(reply.error) : new Error('no reply')],
  );
  return new LockStoreError(operation, key, new AggregateError(errors, detail), detail);
}

/** `[`${n} ${what}`]` when `n` is not 0, else nothing. */
function nonZero(n: number, what: string): string[] {
  return n === 0 ? [] : [`${n} ${what}`];
}
