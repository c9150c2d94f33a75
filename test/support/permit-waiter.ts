import { performance } from 'node:perf_hooks';
import { LockNotAcquiredError } from '../../lib/errors/lock-not-acquired.error.js';
import type { PermitGrant, PermitRequest, PermitStore } from '../../lib/interfaces/permit-store.interface.js';
import { permitConflictError } from '../../lib/core/permits/permit-conflict.js';

/** How long a waiter sleeps at most between two attempts without a notice: the safety net of a missed one. */
const LONGEST_SLEEP = 500;

/**
 * Takes a permit the way the engine is to: asks with a place in the line, and while refused sleeps until a
 * release notice (or the store's hint of the soonest end, or the safety net), then asks again; gives up its
 * place after `wait` ms. The watch is open before the first attempt, so no notice goes unheard.
 * @param onRefused called with each refusal's `ahead` (places before ours), e.g. to see when it stood in line
 * @param direct wait as the engine's waiters do: watch with the token, so that a release may grant the permit
 *   straight to this waiter's place (taken without asking again), and give the place up on any way out
 * @throws LockNotAcquiredError after the wait; LockConfigurationError when the key is in use with another shape
 */
export async function waitForPermit(
  store: PermitStore,
  request: Omit<PermitRequest, 'waiting'>,
  wait: number,
  onRefused?: (ahead: number | undefined) => void,
  direct = false,
): Promise<PermitGrant> {
  const started = performance.now();
  const deadline = started + wait;
  const watch = await store.watch(request.key, undefined, direct ? request.token : undefined);
  let granted = false;
  try {
    for (;;) {
      const left = deadline - performance.now();
      const result = await store.acquire({ ...request, waiting: { ttl: Math.max(1, left), direct } });
      granted = result.acquired;
      if (result.acquired) return result;
      if ('inUseAs' in result) throw permitConflictError(request.shape, result.inUseAs);
      onRefused?.(result.ahead);
      const remaining = deadline - performance.now();
      if (remaining <= 0) {
        await store.leaveLine(request.key, request.token);
        throw new LockNotAcquiredError(request.key, result.remainingTtl, performance.now() - started);
      }
      await watch.next(Math.max(1, Math.min(remaining, (result.remainingTtl ?? LONGEST_SLEEP) + 1, LONGEST_SLEEP)));
      const grant = direct ? store.takeGrant?.(request.key, request.token) : undefined;
      if (grant) {
        granted = true;
        return request.fencing ? { acquired: true, fence: grant.fence } : { acquired: true };
      }
    }
  } finally {
    watch.close();
    // a place left behind, or a permit granted to it meanwhile, would hold the others back
    if (direct && !granted) await store.leaveLine(request.key, request.token).catch(() => undefined);
  }
}
