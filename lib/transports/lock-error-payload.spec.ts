import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { LockKeyError } from '../errors/lock-key.error.js';
import { LockLostError } from '../errors/lock-lost.error.js';
import { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import { LockStoreError } from '../errors/lock-store.error.js';
import { lockErrorPayload } from './lock-error-payload.js';
import { shuttingDownError } from '../core/shutdown-gate.js';

function busy(key: string, remainingTime: number | undefined, keyTemplate?: string): LockNotAcquiredError {
  const error = new LockNotAcquiredError(key, remainingTime, 0);
  error.keyTemplate = keyTemplate;
  return error;
}

describe('lockErrorPayload', () => {
  it('names a busy resource by its key template and never by the resolved key', () => {
    const payload = lockErrorPayload(busy('owner:alice@example.com', 2500, 'owner:<email>'));
    expect(payload).toEqual({
      code: 'LOCKED',
      message: 'Resource "owner:<email>" is locked by another operation; retry later.',
      resource: 'owner:<email>',
      retryAfter: 3,
    });
    expect(JSON.stringify(payload)).not.toContain('alice');
  });

  it('names no resource at all when the key has no template (a direct call without metricKey)', () => {
    const payload = lockErrorPayload(busy('owner:alice@example.com', 10));
    expect(payload).toEqual({
      code: 'LOCKED',
      message: 'The resource is locked by another operation; retry later.',
      retryAfter: 1,
    });
  });

  it('names the resolved key only when exposeResolvedKeys is on', () => {
    const payload = lockErrorPayload(busy('inventory:42', 900, 'inventory:<id>'), { exposeResolvedKeys: true });
    expect(payload).toMatchObject({
      resource: 'inventory:42',
      message: 'Resource "inventory:42" is locked by another operation; retry later.',
    });
  });

  it('gives a store outage, a lost lease and a bad key their own codes, and no payload for a configuration error', () => {
    const outage = new LockStoreError('acquire', 'inventory:42', new Error('ECONNREFUSED'));
    outage.keyTemplate = 'inventory:<id>';
    expect(lockErrorPayload(outage)).toEqual({
      code: 'LOCK_UNAVAILABLE',
      message: 'The lock store is unavailable; retry later.',
      resource: 'inventory:<id>',
      retryAfter: 1,
    });
    expect(lockErrorPayload(shuttingDownError('inventory:42'))).toMatchObject({
      code: 'LOCK_UNAVAILABLE',
      message: 'This instance is shutting down; retry, another instance will serve it.',
    });
    expect(lockErrorPayload(new LockLostError('inventory:42', 'taken'))).toMatchObject({
      code: 'LOCK_LOST',
      retryAfter: 1,
    });
    expect(lockErrorPayload(new LockKeyError('bad key'))).toEqual({
      code: 'LOCK_KEY_INVALID',
      message: "The request's values make no usable lock key; do not retry it as is.",
    });
    expect(lockErrorPayload(new LockConfigurationError('ttl', 0, 'expected more'))).toBeUndefined();
  });

  it("gives an unusable key a fixed message naming its template, never the key's text, unless exposeResolvedKeys", () => {
    const error = new LockKeyError('Lock key "owner:alice@example.com..." is 1300 bytes long, over the limit of 1024');
    error.keyTemplate = 'OwnerController.hold';
    const payload = lockErrorPayload(error);
    expect(payload).toEqual({
      code: 'LOCK_KEY_INVALID',
      message: 'The request\'s values make no usable lock key for "OwnerController.hold"; do not retry it as is.',
      resource: 'OwnerController.hold',
    });
    expect(JSON.stringify(payload)).not.toContain('alice');
    expect(lockErrorPayload(error, { exposeResolvedKeys: true })?.message).toContain('alice');
  });

  it('tells Retry-After as the manager judged it, else from the remaining lease', () => {
    const judged = busy('inventory:42', 29_000, 'inventory:<id>');
    judged.retryAfter = 1;
    expect(lockErrorPayload(judged)?.retryAfter).toBe(1);
    expect(lockErrorPayload(busy('inventory:42', 29_000))?.retryAfter).toBe(29);
  });
});
