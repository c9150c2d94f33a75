import type { LockStoreError } from '../../../errors/lock-store.error.js';
import { quoted } from '../../../utils/printable.js';
import type { RedisClientPort } from '../client/redis-client-port.js';
import { redisStoreError } from '../store-error.js';
import type { PermitKeys } from './permit-keys.js';

/**
 * The `LockStoreError` of a permit operation that met WRONGTYPE, saying why. The likeliest cause during an
 * upgrade: the resource's permit state is still in an earlier version's layout (a hash at the state key, kept
 * there while a process of that version holds or waits for a permit of the resource). Neither layout reads the
 * other's value as empty, so nobody is granted a permit beyond the limit; the operation fails until the deploy
 * is finished or those permits end. Asked with `TYPE` (RedisClientPort does not say which key a WRONGTYPE is
 * about); else another part of the application uses one of the names.
 */
export async function permitWrongTypeError(
  client: RedisClientPort,
  operation: string,
  key: string,
  keys: PermitKeys,
  error: unknown,
): Promise<LockStoreError> {
  let stateType: string | undefined;
  try {
    const [[failure, type]] = (await client.pipeline().type(keys.state).exec()) ?? [[null, undefined]];
    if (!failure) stateType = String(type);
  } catch {
    // the probe failed too: the message names every key the operation touches
  }
  if (stateType === 'hash') {
    const why =
      "holds its permits in an earlier version's layout (a hash): a process of that version holds or waits for a " +
      'permit of this resource; finish the deploy, or let those permits end';
    return redisStoreError(
      operation,
      key,
      error,
      `WRONGTYPE: the key of its permit state ${why}`,
      `Redis key ${quoted(keys.state)} ${why}`,
    );
  }
  const why =
    "holds another type of value than a permit's; another part of the application uses this name: change keyPrefix or the key";
  const names = [keys.state, keys.fence, keys.lock].map((name) => quoted(name)).join(', ');
  return redisStoreError(
    operation,
    key,
    error,
    `WRONGTYPE: one of the Redis keys of its permit state, fence and lock ${why}`,
    `one of the Redis keys ${names} ${why}`,
  );
}
