import { quoted } from '../utils/printable.js';
import { hideProperty, LockError } from './lock.error.js';
import { lockSubject } from './lock-subject.js';

/**
 * Why a lease ended before its holder released it, or why its holder is asked to stop:
 * - `expired`: its validity ran out without a renewal (auto-renew off, or too slow);
 * - `taken`: the store no longer holds our token (the key expired or was deleted, and maybe re-taken);
 * - `store-unreachable`: renewals kept failing until the lease's validity ran out;
 * - `stalled`: the process was blocked past the lease validity, so another holder may have run;
 * - `released`: the lease was already released by its holder (from `extend()` after `release()`);
 * - `revoked`: an operator force-released it (`LockService.forceRelease`, the admin page or the CLI), which also
 *   raised its fence, so fenced writes of this holder are refused;
 * - `shutdown`: no loss: the application is shutting down and its drain ended while the holder still held
 *   the lease. The signal asks the work to stop; the lease is kept (and renewed, if it was) until its holder
 *   releases it or the process exits, so no other instance enters before then;
 * - `resigned`: no loss: a leader gave up its leadership (`stop()`, its function ended, or the shutdown), and
 *   its term's signal tells the work of that term to stop.
 */
export type LockLostReason =
  'expired' | 'taken' | 'store-unreachable' | 'stalled' | 'released' | 'revoked' | 'shutdown' | 'resigned';

const explanations: Record<LockLostReason, string> = {
  expired: 'its lease expired before it was renewed',
  taken: 'the store no longer holds this lease (it expired or was deleted)',
  'store-unreachable': 'the lock store could not be reached to renew it before it expired',
  stalled: 'the process was blocked past the lease validity, so another owner may have taken it',
  released: 'it was already released',
  revoked: 'an operator force-released it and raised its fence',
  shutdown:
    'the application is shutting down and its drain ended before the section did; the lease is kept until the ' +
    'section ends or the process exits',
  resigned: 'this instance resigned its leadership',
};

/**
 * A lease ended before its holder was done with it, so work guarded by it may no longer be exclusive; or,
 * with reason `shutdown`, its holder is asked to stop while the lease is kept.
 */
export class LockLostError extends LockError {
  readonly code = 'LOCK_LOST' as const;
  /** The resource whose lease ended: the resolved key (not printed with the error; see {@link LockError}). */
  declare readonly key: string;

  constructor(
    key: string,
    readonly reason: LockLostReason,
    options?: { cause?: unknown },
  ) {
    super(lost(undefined, reason), options);
    hideProperty(this, 'key', key);
  }

  /** @internal */
  override describeResource(name: string | undefined): string {
    return lost(name, this.reason);
  }
}

function lost(name: string | undefined, reason: LockLostReason): string {
  if (reason !== 'shutdown' && reason !== 'resigned') return `${lockSubject(name)} was lost: ${explanations[reason]}.`;
  const lock = name === undefined ? 'a lock' : `lock ${quoted(name)}`;
  return `Work under ${lock} should stop: ${explanations[reason]}.`;
}
