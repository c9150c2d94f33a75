import { readReleaseNotice } from './release-notice.js';

describe('readReleaseNotice', () => {
  it('reads a bare notice as one for every waiter of the key', () => {
    expect(readReleaseNotice('AbC-_09xyz')).toEqual({ key: 'AbC-_09xyz' });
  });

  it('reads the process first in line, and the one after it when named', () => {
    expect(readReleaseNotice('k 0123456789abcdef')).toEqual({ key: 'k', first: '0123456789abcdef' });
    expect(readReleaseNotice('k 0123456789abcdef fedcba9876543210')).toEqual({
      key: 'k',
      first: '0123456789abcdef',
      next: 'fedcba9876543210',
    });
  });
});
