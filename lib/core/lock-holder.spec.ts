import { hostname } from 'node:os';
import { decodeHolder, encodeHolder, toLockInfo } from './lock-holder.js';

describe('holder records', () => {
  it('round-trips host, pid, label and time through the stored text', () => {
    const before = Date.now();
    const holder = decodeHolder(encodeHolder('Job.run'));
    expect(holder).toEqual({ host: hostname(), pid: process.pid, label: 'Job.run', acquiredAt: expect.any(Date) });
    expect(holder!.acquiredAt.getTime()).toBeGreaterThanOrEqual(before);
    expect(decodeHolder(encodeHolder(undefined))).not.toHaveProperty('label');
  });

  it.each([
    ['not JSON', 'holder'],
    ['a JSON number', '42'],
    ['JSON null', 'null'],
    ['a record without a host', '{"pid":1,"acquiredAt":"2024-01-01T00:00:00Z"}'],
    ['a record with a bad date', '{"host":"h","pid":1,"acquiredAt":"yesterday"}'],
  ])('reads %s as no holder instead of failing inspect()', (_label, text) => {
    expect(decodeHolder(text)).toBeUndefined();
  });

  it('shows the holder only while the lock is held, and never the raw text', () => {
    const holder = encodeHolder('Job.run');
    expect(toLockInfo({ held: true, remainingTtl: 10, holder }).holder?.label).toBe('Job.run');
    expect(toLockInfo({ held: false, holder })).toEqual({ held: false });
  });
});
