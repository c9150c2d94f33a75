import { isLockError } from '../errors/lock.error.js';
import type { ShutdownGate } from './shutdown-gate.js';

/**
 * A manager's check of its store (`LockStore.verify`: reachable, may run its scripts, no server that evicts
 * leases, no Redlock node given twice), which its first acquisition waits for: run once, shared by every call
 * that comes meanwhile, then never again unless `verify()` is called. A `LockConfigurationError` refuses every
 * acquisition after it (as it fails a Nest bootstrap) until a `verify()` passes; a store that did not answer is
 * checked again by the next acquisition, since an outage at startup says nothing of the store's settings.
 */
export class StoreCheck {
  /** Whether acquisitions may go to the store: the check passed, or none is asked for. */
  passed: boolean;
  private running?: Promise<readonly string[]>;
  private refusal?: Error;

  /**
   * @param check the store's check; resolves its warnings, rejects with what makes the store unusable
   * @param required whether acquisitions must wait for it (`false` when the store has nothing to check, or
   *   whoever made the manager checks the store otherwise)
   * @param shutdown the manager's: a manager that is closing refuses acquisitions itself, unchecked
   */
  constructor(
    private readonly check: () => Promise<readonly string[]>,
    required: boolean,
    private readonly shutdown: ShutdownGate,
  ) {
    this.passed = !required;
  }

  /**
   * Runs the check now, or joins the one under way; its outcome is what later acquisitions go by.
   * @returns the warnings of the check
   */
  run(): Promise<readonly string[]> {
    this.running ??= this.check().then(
      (warnings) => {
        this.running = undefined;
        this.refusal = undefined;
        this.passed = true;
        return warnings;
      },
      (error: unknown) => {
        this.running = undefined;
        if (isLockError(error, 'LOCK_CONFIGURATION')) {
          this.refusal = error;
          this.passed = false;
        }
        throw error;
      },
    );
    return this.running;
  }

  /**
   * What an acquisition waits for while the store has not passed: the refusal of an earlier check, or the
   * outcome of the check under way (started if none is).
   * @throws LockConfigurationError when the store's settings make locks unsafe
   * @throws LockStoreError when the store did not answer the check
   */
  async beforeGrant(): Promise<void> {
    if (this.shutdown.begun) return;
    if (this.refusal) throw this.refusal;
    await this.run();
  }
}
