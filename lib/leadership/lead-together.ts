import { LockLostError } from '../errors/lock-lost.error.js';
import { leaderKey } from './leader-key.js';
import type { Leadership } from './leadership.js';

/**
 * Runs several functions in one term (the `@Leader` methods of one name), which lasts until every one has
 * returned. When one throws, the term ends (its signal aborts, reason `resigned`) so that the others stop, and
 * its error is thrown once they have all returned: the lease is released only then, so no other instance leads
 * while one of them still runs.
 */
export async function leadTogether(
  leadership: Leadership,
  functions: ReadonlyArray<(leadership: Leadership) => unknown>,
): Promise<void> {
  let failure: { readonly error: unknown } | undefined;
  await Promise.all(
    functions.map(async (fn) => {
      try {
        // awaited inside: a function that throws before returning a promise ends the term like one that rejects
        await fn(leadership);
      } catch (error) {
        if (failure) return;
        failure = { error };
        leadership.end(new LockLostError(leaderKey(leadership.name), 'resigned'));
      }
    }),
  );
  if (failure) throw failure.error;
}
