import { HoldTimes } from './hold-times.js';

describe('HoldTimes', () => {
  it('knows nothing of a template before its first hold ended', () => {
    expect(new HoldTimes().usual('job:<id>')).toBeUndefined();
  });

  it('settles near the usual hold of steady 40 ms sections, far below any lease', () => {
    const holds = new HoldTimes();
    for (let i = 0; i < 50; i++) holds.record('job:<id>', 38 + (i % 5));
    expect(holds.usual('job:<id>')).toBeGreaterThanOrEqual(40);
    expect(holds.usual('job:<id>')).toBeLessThan(60);
  });

  it('rises at once after a long hold, and comes back down as holds return to normal', () => {
    const holds = new HoldTimes();
    for (let i = 0; i < 20; i++) holds.record('t', 40);
    holds.record('t', 10_000);
    expect(holds.usual('t')).toBeGreaterThan(10_000);
    for (let i = 0; i < 30; i++) holds.record('t', 40);
    expect(holds.usual('t')).toBeLessThan(1000);
  });

  it('keeps at most its capacity of templates, forgetting the one used least recently', () => {
    const holds = new HoldTimes(2);
    holds.record('a', 10);
    holds.record('b', 20);
    holds.record('a', 10);
    holds.record('c', 30);
    expect(holds.usual('b')).toBeUndefined();
    expect(holds.usual('a')).toBeDefined();
    expect(holds.usual('c')).toBeDefined();
  });
});
