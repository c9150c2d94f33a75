import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import type { PermitShape } from '../interfaces/permit-store.interface.js';
import { checkPermitShape, MAX_PERMIT_LIMIT } from './permit-shape.js';

function refusal(shape: unknown, scope?: string): LockConfigurationError {
  try {
    checkPermitShape(shape as PermitShape, scope);
  } catch (error) {
    return error as LockConfigurationError;
  }
  throw new Error('the shape was accepted');
}

describe('permit shapes', () => {
  it('accepts a whole limit from 1 and a read or write mode', () => {
    expect(checkPermitShape({ limit: 1 })).toEqual({ limit: 1 });
    expect(checkPermitShape({ limit: MAX_PERMIT_LIMIT })).toEqual({ limit: MAX_PERMIT_LIMIT });
    expect(checkPermitShape({ mode: 'read' })).toEqual({ mode: 'read' });
    expect(checkPermitShape({ mode: 'write' })).toEqual({ mode: 'write' });
  });

  it.each([0, -1, 1.5, Number.NaN, MAX_PERMIT_LIMIT + 1, '3', undefined])(
    'refuses the limit %p, naming the option under its scope',
    (limit) => {
      const error = refusal({ limit }, '@WithLock(Export.run)');
      expect(error).toBeInstanceOf(LockConfigurationError);
      expect(error.option).toBe('@WithLock(Export.run).limit');
      expect(error.message).toContain(`from 1 to ${MAX_PERMIT_LIMIT}`);
    },
  );

  it('refuses a mode other than read or write, and a limit with a mode', () => {
    expect(refusal({ mode: 'upgrade' }).option).toBe('mode');
    expect(refusal({ limit: 3, mode: 'read' }).message).toContain(
      'either a semaphore (limit) or a readers-writer lock',
    );
  });
});
