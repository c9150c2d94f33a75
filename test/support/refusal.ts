import { inspect } from 'node:util';
import { expect } from '@jest/globals';
import { LockConfigurationError } from '../../lib/errors/lock-configuration.error.js';

/**
 * The `LockConfigurationError` that `run` throws; a test failure showing `accepted` (what was let through)
 * when it throws none.
 */
export function refusalOf(run: () => unknown, accepted: unknown): LockConfigurationError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(LockConfigurationError);
    return error as LockConfigurationError;
  }
  throw new Error(`accepted ${inspect(accepted)}`);
}
