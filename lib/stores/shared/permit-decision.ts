import type { PermitRequest, PermitResult, PermitShape } from '../../interfaces/permit-store.interface.js';
import { inUseAs, modeCode, shapeText } from './permit-codes.js';
import { callLine, fits, hasLapsed, type HeldPermit, type LineCall, type WaitingPlace } from './permit-line.js';

/** One resource's permits and line as a store holds them while it decides (its own kinds of each). */
export interface PermitLedger<P extends HeldPermit, W extends WaitingPlace> {
  /** The shape the resource is kept with (`limit:<N>`, `rw`), '' while it has none. */
  shape: string;
  readonly permits: Map<string, P>;
  line: W[];
}

/** What {@link decidePermit} needs of the store beside the resource. */
export interface PermitDecisionParts<P extends HeldPermit, W extends WaitingPlace> {
  /** The store's clock at the decision, as the resource's times are counted. */
  readonly now: number;
  /** The store's hand-off window, in ms. */
  readonly window: number;
  /** For how many ms a mutex lease (or a mutex caller's claim) holds the key against permits; `undefined`: none. */
  readonly mutexTtl: number | undefined;
  /** Takes the resource's next fence. */
  nextFence(): number;
  /** The store's record of a permit granted now. */
  permit(held: HeldPermit): P;
  /** The store's record of a place taken now. */
  place(place: WaitingPlace): W;
}

/** What {@link decidePermit} answered and did. */
export interface PermitDecision {
  readonly result: PermitResult;
  /** Whether the resource changed: the store keeps (writes back) what it now holds. */
  readonly changed: boolean;
  /** The line as called, when it was: the waiters of the places it reserved permits for are to be told. */
  readonly line?: LineCall;
}

/**
 * Decides a permit request on a resource the store has pruned of ended permits and places, as every store
 * with permits does (memory and PostgreSQL here, the same rules as the Redis scripts): a retry of a live permit
 * is refreshed and answered as the first time; a request of another shape than the resource's is refused
 * while it has permits or places; the line is called (permit-line.ts) and the request is admitted when its
 * place fits, or without a place when nobody is held back and it fits beside the holders; a refused request
 * that waits takes a place at the end of the line (or keeps its own). Changes `resource` in place.
 */
export function decidePermit<P extends HeldPermit, W extends WaitingPlace>(
  resource: PermitLedger<P, W>,
  request: PermitRequest,
  shape: PermitShape,
  parts: PermitDecisionParts<P, W>,
): PermitDecision {
  const { now } = parts;
  const { token } = request;
  const own = resource.permits.get(token);
  // our own live permit: a retry whose first reply was lost; refresh it and answer as the first time
  if (own) {
    own.expiresAt = now + request.ttl;
    if (request.holder !== undefined) own.holder = request.holder;
    return { result: request.fencing ? { acquired: true, fence: own.fence ?? 0 } : { acquired: true }, changed: true };
  }
  const text = shapeText(shape);
  if (resource.shape !== text && (resource.permits.size > 0 || resource.line.length > 0)) {
    return { result: { acquired: false, inUseAs: inUseAs(resource.shape) }, changed: false };
  }
  resource.shape = text;
  const limit = 'limit' in shape ? shape.limit : undefined;
  const mode = modeCode(shape);
  let position = resource.line.findIndex((place) => place.token === token);
  // back after its reservation lapsed: it takes its turn again from its place
  if (position >= 0 && hasLapsed(resource.line[position], now)) resource.line[position].reservedUntil = 0;
  const line = callLine(resource.permits, resource.line, {
    limit,
    window: parts.window,
    exclusive: parts.mutexTtl !== undefined,
    now,
  });
  const admitted = position >= 0 ? line.fitting.has(token) : !line.stopped && fits(limit, mode, line);
  if (admitted) {
    if (position >= 0) resource.line.splice(position, 1);
    const fence = request.fencing ? parts.nextFence() : undefined;
    resource.permits.set(token, parts.permit({ mode, expiresAt: now + request.ttl, fence, holder: request.holder }));
    return { result: fence === undefined ? { acquired: true } : { acquired: true, fence }, changed: true, line };
  }
  if (request.waiting) {
    const until = now + Math.max(1, request.waiting.ttl);
    if (position >= 0) resource.line[position].until = until;
    else position = resource.line.push(parts.place({ token, mode, until, reservedUntil: 0 })) - 1;
  }
  const remainingTtl = soonestEnd(resource, parts.mutexTtl, now);
  if (position < 0) return { result: { acquired: false, remainingTtl }, changed: true, line };
  const ahead = resource.line.slice(0, position).filter((place) => !hasLapsed(place, now)).length;
  return { result: { acquired: false, remainingTtl, ahead }, changed: true, line };
}

/** How soon something holding a request back ends by itself: a permit, a reservation, the mutex. */
function soonestEnd(
  resource: PermitLedger<HeldPermit, WaitingPlace>,
  mutexTtl: number | undefined,
  now: number,
): number | undefined {
  const ends = [
    ...[...resource.permits.values()].map((permit) => permit.expiresAt - now),
    ...resource.line.filter((place) => place.reservedUntil > now).map((place) => place.reservedUntil - now),
    ...(mutexTtl === undefined ? [] : [mutexTtl]),
  ];
  return ends.length === 0 ? undefined : Math.max(0, Math.ceil(Math.min(...ends)));
}
