import type { Duration } from '../utils/duration.js';
import type { LockDefaults, LockLogger } from './lock-options.interface.js';
import type { LockStore } from './lock-store.interface.js';

/** Options of a `LockManager`: a store and the defaults of every acquisition. */
export interface LockManagerOptions extends LockDefaults {
  /** Where leases live. */
  readonly store: LockStore;
  /** Where lost leases and store failures are reported. @default silent */
  readonly logger?: LockLogger;
  /**
   * Close the store in `close()`; leave it `false` for a store someone else still uses. Two managers that wait
   * for the same keys are better on stores of their own: on one store they share its place in each key's line.
   * @default true
   */
  readonly closeStore?: boolean;
  /**
   * How long `close()` lets holders inside their locked section finish (their leases still renewed) before
   * it asks the rest to stop: their signals abort with reason `shutdown` and their leases stay held until
   * they let go; `0` asks at once. `close()` resolves by then.
   * @default '5s'
   */
  readonly drainTimeout?: Duration;
  /**
   * Check the store (see `verify()`) before the first acquisition, which waits for it; a check that fails
   * refuses the acquisitions with its error. `false` when you check the store yourself otherwise.
   * @default true
   */
  readonly verifyOnFirstUse?: boolean;
  /**
   * Name the resolved key (`order:42`) in error messages and log lines instead of its key template (the
   * `metricKey` option; a direct call without one names none). Off by default: a resolved key may carry user
   * data (an e-mail, a tenant) that logs should not keep. `error.key` holds it either way.
   * @default false
   */
  readonly exposeResolvedKeys?: boolean;
}
