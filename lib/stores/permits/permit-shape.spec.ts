import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import type { PermitShape } from '../../interfaces/permit-store.interface.js';
import { checkPermitShape, inUseAs, MAX_PERMIT_LIMIT, permitConflictError, shapeText } from './permit-shape.js';

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

  it('keeps a shape as text that reads back as what the key is in use as', () => {
    expect(inUseAs(shapeText({ limit: 7 }))).toBe(7);
    expect(inUseAs(shapeText({ mode: 'read' }))).toBe('read-write');
    expect(shapeText({ mode: 'write' })).toBe(shapeText({ mode: 'read' }));
  });

  it('says what a disagreeing caller asked for and what the key is in use as', () => {
    const semaphore = permitConflictError({ mode: 'read' }, 3);
    expect(semaphore.option).toBe('mode');
    expect(semaphore.message).toContain('"mode": got the string "read"; the key is in use as a semaphore with limit 3');
    const readersWriter = permitConflictError({ limit: 2 }, 'read-write', 'using');
    expect(readersWriter.option).toBe('using.limit');
    expect(readersWriter.message).toContain('in use as a readers-writer lock');
  });
});
