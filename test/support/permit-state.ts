import type { Redis } from 'ioredis';
import { permitKeys } from '../../lib/stores/redis/permits/permit-keys.js';

/** A resource's permit state as a test reads it: the tokens of its permits and of its places, in order. */
export interface StoredPermitState {
  readonly shape: string;
  readonly permits: string[];
  readonly places: string[];
}

/**
 * Reads the permit state of `key` (lib/stores/redis/permits/scripts/permit-state.lua.ts) as the scripts do,
 * decoded on the server; undefined while the resource keeps none.
 */
export async function storedPermitState(
  admin: Redis,
  prefix: string,
  key: string,
): Promise<StoredPermitState | undefined> {
  const reply = (await admin.eval(
    `local raw = redis.call('GET', KEYS[1])
if not raw then return false end
local value = cmsgpack.unpack(raw)
local permits, places = {}, {}
for _, permit in ipairs(value[3]) do permits[#permits + 1] = permit[1] end
for _, place in ipairs(value[4]) do places[#places + 1] = place[1] end
return { value[1], permits, places }`,
    1,
    permitKeys(prefix, key).state,
  )) as [string, string[], string[]] | null;
  if (!reply) return undefined;
  return { shape: reply[0], permits: reply[1], places: reply[2] };
}
