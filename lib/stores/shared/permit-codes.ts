import type { PermitConflict, PermitShape } from '../../interfaces/permit-store.interface.js';

/** How a store marks a permit's mode: `p` a semaphore permit, `r` a reader, `w` the writer. */
export type PermitModeCode = 'p' | 'r' | 'w';

/** The text a store keeps with a resource for its shape: `limit:<N>` or `rw`. */
export function shapeText(shape: PermitShape): string {
  return 'limit' in shape ? `limit:${shape.limit}` : 'rw';
}

/** The mode code of a request's permit. */
export function modeCode(shape: PermitShape): PermitModeCode {
  if ('limit' in shape) return 'p';
  return shape.mode === 'read' ? 'r' : 'w';
}

/** What a resource kept as `text` is in use as, for a {@link PermitConflict}. */
export function inUseAs(text: string): PermitConflict['inUseAs'] {
  return text.startsWith('limit:') ? Number(text.slice('limit:'.length)) : 'read-write';
}
