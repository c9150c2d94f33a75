import { inUseAs, shapeText } from './permit-codes.js';

describe('permit shape codes', () => {
  it('keeps a shape as text that reads back as what the key is in use as', () => {
    expect(inUseAs(shapeText({ limit: 7 }))).toBe(7);
    expect(inUseAs(shapeText({ mode: 'read' }))).toBe('read-write');
    expect(shapeText({ mode: 'write' })).toBe(shapeText({ mode: 'read' }));
  });
});
