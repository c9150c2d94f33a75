import { setTimeoutAfterReads } from '../../utils/timeout-after-reads.js';

/** One node's part in a round: its reply, the error it met (a timeout included), or still nothing. */
export type NodeReply<T> =
  | { readonly state: 'ok'; readonly value: T }
  | { readonly state: 'failed'; readonly error: unknown }
  | { readonly state: 'pending' };

/** A node gave no reply within the per-node timeout; it may still apply the command later. */
export class NodeTimeoutError extends Error {
  constructor(readonly timeout: number) {
    super(`no reply within ${timeout} ms`);
    this.name = 'NodeTimeoutError';
  }
}

/**
 * Sends one request to each of `count` nodes at once and collects the replies. Resolves as soon as
 * `decided(replies)` says the outcome is known (nodes still pending then stay `pending`), when every node
 * has answered, or after `timeout` ms, when every node still silent counts as failed with a
 * {@link NodeTimeoutError} (a reply that reached this process by then counts, even when its event loop was
 * too busy to read it in time). Never rejects: each node's error is its reply.
 */
export function sendToAll<T>(
  count: number,
  send: (index: number) => Promise<T>,
  timeout: number,
  decided: (replies: readonly NodeReply<T>[]) => boolean = () => false,
): Promise<NodeReply<T>[]> {
  if (count === 0) return Promise.resolve([]);
  return new Promise((resolve) => {
    const replies: NodeReply<T>[] = Array.from({ length: count }, () => ({ state: 'pending' }));
    let outstanding = count;
    let done = false;
    const finish = (): void => {
      done = true;
      cancelExpiry();
      resolve(replies.slice());
    };
    const settle = (index: number, reply: NodeReply<T>): void => {
      if (done) return;
      replies[index] = reply;
      outstanding--;
      if (outstanding === 0 || decided(replies)) finish();
    };
    const expire = (): void => {
      if (done) return;
      replies.forEach((reply, index) => {
        if (reply.state === 'pending') replies[index] = { state: 'failed', error: new NodeTimeoutError(timeout) };
      });
      finish();
    };
    // a node that answered in time is not called silent because this process was not running
    const cancelExpiry = setTimeoutAfterReads(expire, timeout);
    for (let index = 0; index < count; index++) {
      let request: Promise<T>;
      try {
        request = send(index);
      } catch (error) {
        request = Promise.reject(error);
      }
      request.then(
        (value) => settle(index, { state: 'ok', value }),
        (error: unknown) => settle(index, { state: 'failed', error }),
      );
    }
  });
}

/** How many replies are answers (not failures, not pending) that satisfy `test`. */
export function countAnswers<T>(replies: readonly NodeReply<T>[], test: (value: T) => boolean = () => true): number {
  let count = 0;
  for (const reply of replies) if (reply.state === 'ok' && test(reply.value)) count++;
  return count;
}
