/** The Redis client libraries the store recognises by the shape of a client. */
export type ClientShape = 'ioredis' | 'node-redis' | 'glide' | 'unknown' | 'not a client';

/**
 * Which library made `value`: ioredis and iovalkey (`evalsha` and `options`), node-redis (`sendCommand` and
 * `isOpen`), GLIDE (`customCommand`); another class instance is a client of unknown shape, and a plain object
 * (connection options) or anything else is not a client.
 */
export function clientShape(value: unknown): ClientShape {
  if (typeof value !== 'object' || value === null) return 'not a client';
  const client = value as Record<string, unknown>;
  if (typeof client.evalsha === 'function' && typeof client.options === 'object') return 'ioredis';
  if (typeof client.sendCommand === 'function' && typeof client.isOpen === 'boolean') return 'node-redis';
  if (typeof client.customCommand === 'function') return 'glide';
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null || Array.isArray(value) ? 'not a client' : 'unknown';
}
