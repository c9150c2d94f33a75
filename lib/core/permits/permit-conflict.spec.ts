import { permitConflictError } from './permit-conflict.js';

describe('permit conflicts', () => {
  it('says what a disagreeing caller asked for and what the key is in use as', () => {
    const semaphore = permitConflictError({ mode: 'read' }, 3);
    expect(semaphore.option).toBe('mode');
    expect(semaphore.message).toContain('"mode": got the string "read"; the key is in use as a semaphore with limit 3');
    const readersWriter = permitConflictError({ limit: 2 }, 'read-write', 'using');
    expect(readersWriter.option).toBe('using.limit');
    expect(readersWriter.message).toContain('in use as a readers-writer lock');
  });
});
