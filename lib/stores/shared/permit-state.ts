import type { PermitHolderState, PermitMode, PermitState } from '../../interfaces/permit-store.interface.js';

/** The mode a stored mode code names; `undefined` for a semaphore permit, which has none. */
export function modeOfCode(code: string): PermitMode | undefined {
  return code === 'r' ? 'read' : code === 'w' ? 'write' : undefined;
}

/** The limit a resource kept with the shape `text` has (`limit:<N>`); `undefined` for a readers-writer one. */
export function limitOfShape(text: string | undefined): number | undefined {
  return text?.startsWith('limit:') ? Number(text.slice('limit:'.length)) : undefined;
}

/** What a store read of one resource, for {@link permitState}. */
export interface PermitReading {
  /** The shape the resource is kept with (`limit:<N>`, `rw`, or none). */
  readonly shape: string | undefined;
  /** Its live permits, soonest end first. */
  readonly permits: readonly PermitHolderState[];
  /** How many places of its line hold someone back. */
  readonly waiting: number;
  /** Its fence counter, when it has one. */
  readonly fence: number | undefined;
}

/** The state of a resource as every permit store reports it: limit and mode only while it is in use. */
export function permitState({ shape, permits, waiting, fence }: PermitReading): PermitState {
  const inUse = permits.length > 0 || waiting > 0;
  const limit = limitOfShape(shape);
  return {
    held: permits.length > 0,
    holders: permits.length,
    ...(inUse && limit !== undefined ? { limit } : {}),
    ...(shape === 'rw' && permits.length > 0
      ? { mode: permits.some((permit) => permit.mode === 'write') ? 'write' : 'read' }
      : {}),
    waiting,
    ...(fence !== undefined ? { fence } : {}),
    permits,
  };
}
