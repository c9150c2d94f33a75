import { performance } from 'node:perf_hooks';
import { leavesRoomForRenewal } from '../../options/lease-bounds.js';

/** The drift allowance of a `ttl` ms lease with `driftFactor`: `ttl * driftFactor + 2 ms`. */
export function redlockClockDrift(ttl: number, driftFactor: number): number {
  return Math.floor(ttl * driftFactor) + 2;
}

/**
 * Whether an extension to `ttl` ms is a release's keep rather than a lease a holder works under: shorter than
 * three times its drift allowance, which the engine refuses for leases and extensions (`checkDriftAllowance`).
 * Its validity is no concern (its holder has let go), and a few ms can never leave any once the drift is taken off.
 */
export function isKeep(ttl: number, driftFactor: number): boolean {
  return !leavesRoomForRenewal(ttl, redlockClockDrift(ttl, driftFactor));
}

/** A lease a quorum of nodes set or extended, and when: what its validity is counted from. */
export interface QuorumTiming {
  /** What the nodes did to the lease, for the message (`grant`, `extend`). */
  readonly action: string;
  /** The lease's length, in ms. */
  readonly ttl: number;
  readonly driftFactor: number;
  /** When (`performance.now()`) the request was sent. */
  readonly started: number;
  /** When (`performance.now()`) the quorum had answered. @default now */
  readonly answered?: number;
}

/**
 * Why a lease set by a request sent at `started` is no use: the quorum answered (at `answered`) so late that
 * `ttl - elapsed - drift` is not positive (drift: `ttl * driftFactor + 2 ms`). `undefined` while valid.
 */
export function noValidityLeft({
  action,
  ttl,
  driftFactor,
  started,
  answered = performance.now(),
}: QuorumTiming): string | undefined {
  const drift = redlockClockDrift(ttl, driftFactor);
  const elapsed = answered - started;
  if (ttl - elapsed - drift > 0) return undefined;
  return (
    `the nodes took ${Math.round(elapsed)} ms to ${action} a ${ttl} ms lease (with ${drift} ms allowed for clock ` +
    'drift), so no validity was left. Use a longer ttl, or check the latency of the nodes'
  );
}
