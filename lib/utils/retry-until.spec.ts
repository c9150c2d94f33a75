import { performance } from 'node:perf_hooks';
import { retryUntil } from './retry-until.js';

describe('retryUntil', () => {
  it('tries again after each failure until the operation succeeds', async () => {
    let calls = 0;
    await retryUntil(
      async () => {
        if (++calls < 3) throw new Error('down');
      },
      performance.now() + 5000,
      () => false,
    );
    expect(calls).toBe(3);
  });

  it('starts no try after `until`, and none once it returned', async () => {
    const tries: number[] = [];
    const until = performance.now() + 300;
    await retryUntil(
      async () => {
        tries.push(performance.now());
        throw new Error('down');
      },
      until,
      () => false,
    );
    // 20, 40, 80 and 160 ms apart on an idle machine: four tries
    expect(tries.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...tries)).toBeLessThan(until);
    const count = tries.length;
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(tries).toHaveLength(count);
  });

  it('stops trying when told to', async () => {
    let calls = 0;
    await retryUntil(
      async () => {
        calls++;
        throw new Error('down');
      },
      performance.now() + 5000,
      () => calls === 2,
    );
    expect(calls).toBe(2);
  });
});
