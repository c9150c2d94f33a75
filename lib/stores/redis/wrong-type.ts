import type { RedisClientPort } from './client/redis-client-port.js';
import { quoted } from '../../utils/printable.js';
import type { ResourceKeys } from './resource-keys.js';

/** The type of value each key of a resource holds, as Redis `TYPE` names it. */
const KEY_TYPES: Readonly<Record<Exclude<keyof ResourceKeys, 'channel'>, string>> = {
  lock: 'string',
  fence: 'string',
  line: 'list',
  revoked: 'hash',
};

/** The keys each operation's commands touch: where a WRONGTYPE can come from. */
const KEYS_TOUCHED: Readonly<Record<string, ReadonlyArray<keyof typeof KEY_TYPES>>> = {
  acquire: ['lock', 'fence', 'line'],
  // a release may be a hand-over, which grants the next lease (and fence) in the same script
  release: ['lock', 'fence', 'line'],
  'leave the line of': ['line'],
  extend: ['lock'],
  renew: ['lock'],
  inspect: ['lock', 'fence'],
};

/** Which key of a resource is which, in a message that may not name the key itself. */
const KEY_ROLES: Readonly<Record<keyof typeof KEY_TYPES, string>> = {
  lock: 'its lock key',
  fence: 'its fence counter',
  line: 'the key of its waiting line',
  revoked: 'the key of its revoked tokens',
};

/** Why a WRONGTYPE happened: by the role of each key, and naming the keys (which carry the resolved key). */
export interface WrongTypeDetails {
  readonly detail: string;
  readonly keyedDetail: string;
}

/**
 * Which key of the resource holds another type of value than the one the store keeps there, asked with
 * `TYPE` (RedisClientPort does not say which key a WRONGTYPE is about), for a message that names exactly that key
 * (`keyedDetail`), or its role where the resolved key may not be shown (`detail`).
 * @param operation the one that met the WRONGTYPE, as its LockStoreError names it
 */
export async function describeWrongType(
  client: RedisClientPort,
  operation: string,
  keys: ResourceKeys,
): Promise<WrongTypeDetails> {
  const touched = KEYS_TOUCHED[operation] ?? (Object.keys(KEY_TYPES) as Array<keyof typeof KEY_TYPES>);
  const advice = 'another part of the application uses this name: change keyPrefix or the key';
  try {
    const pipeline = client.pipeline();
    for (const field of touched) pipeline.type(keys[field]);
    const types = ((await pipeline.exec()) ?? []).map(([failure, type]) => (failure ? undefined : type));
    const wrong = touched
      .map((field, index) => ({ field, type: types[index], expected: KEY_TYPES[field] }))
      .filter(({ type, expected }) => type !== undefined && type !== 'none' && type !== expected);
    if (wrong.length > 0) {
      const described = (name: (field: keyof typeof KEY_TYPES) => string): string =>
        wrong
          .map(
            ({ field, type, expected }) =>
              `${name(field)} holds another type of value (a ${String(type)}, where the store keeps a ${expected})`,
          )
          .join('; ');
      return {
        detail: `WRONGTYPE: ${described((field) => KEY_ROLES[field])}; ${advice}`,
        keyedDetail: `${described((field) => `Redis key ${quoted(keys[field])}`)}; ${advice}`,
      };
    }
  } catch {
    // the probe failed too: fall back to naming every key the operation touched
  }
  return {
    detail: `WRONGTYPE: one of ${touched.map((field) => KEY_ROLES[field]).join(', ')} holds another type of value than a lock's; ${advice}`,
    keyedDetail: `one of the Redis keys ${touched.map((field) => quoted(keys[field])).join(', ')} holds another type of value than a lock's; ${advice}`,
  };
}
