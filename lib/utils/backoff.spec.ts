import { backoffDelay, toldWaiterDelay, type BackoffOptions } from './backoff.js';

const options: BackoffOptions = { minDelay: 50, maxDelay: 1000, factor: 2 };
const lowest = () => 0;
const highest = () => 1 - Number.EPSILON;

describe('backoffDelay', () => {
  it('jitters each delay within the upper half of its ceiling', () => {
    for (let attempt = 0; attempt < 12; attempt++) {
      const ceiling = Math.min(1000, 50 * 2 ** attempt);
      expect(backoffDelay(attempt, options, lowest)).toBe(Math.round(ceiling / 2));
      expect(backoffDelay(attempt, options, highest)).toBe(ceiling);
    }
  });

  it('grows by the factor from minDelay until it reaches maxDelay', () => {
    const ceilings = Array.from({ length: 7 }, (_, attempt) => backoffDelay(attempt, options, highest));
    expect(ceilings).toEqual([50, 100, 200, 400, 800, 1000, 1000]);
    const tripled = Array.from({ length: 4 }, (_, attempt) =>
      backoffDelay(attempt, { minDelay: 10, maxDelay: 500, factor: 3 }, highest),
    );
    expect(tripled).toEqual([10, 30, 90, 270]);
  });

  it('stays capped at maxDelay however many attempts were made, even when the growth overflows', () => {
    for (const attempt of [20, 100, 1100, 1_000_000]) {
      const delay = backoffDelay(attempt, options);
      expect(Number.isFinite(delay)).toBe(true);
      expect(delay).toBeGreaterThanOrEqual(500);
      expect(delay).toBeLessThanOrEqual(1000);
    }
  });

  it('keeps a constant range with factor 1', () => {
    const constant = { minDelay: 200, maxDelay: 5000, factor: 1 };
    for (const attempt of [0, 1, 10, 100]) {
      expect(backoffDelay(attempt, constant, lowest)).toBe(100);
      expect(backoffDelay(attempt, constant, highest)).toBe(200);
    }
  });

  it('never returns 0, so a waiter cannot spin, even with a 1 ms minimum', () => {
    expect(backoffDelay(0, { minDelay: 1, maxDelay: 1, factor: 2 }, lowest)).toBe(1);
  });

  it('spreads the delays of one attempt with the default random source', () => {
    const delays = Array.from({ length: 1000 }, () => backoffDelay(3, options));
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(200);
    expect(Math.max(...delays)).toBeLessThanOrEqual(400);
    expect(new Set(delays).size).toBeGreaterThan(50);
  });
});

describe('toldWaiterDelay', () => {
  it('jitters maxDelay in its upper half, whatever minDelay and factor say', () => {
    expect(toldWaiterDelay(options, lowest)).toBe(500);
    expect(toldWaiterDelay(options, highest)).toBe(1000);
    expect(toldWaiterDelay({ minDelay: 200, maxDelay: 200, factor: 1 }, lowest)).toBe(100);
  });

  it('never returns 0, even with a 1 ms maxDelay', () => {
    expect(toldWaiterDelay({ minDelay: 1, maxDelay: 1, factor: 2 }, lowest)).toBe(1);
  });
});
