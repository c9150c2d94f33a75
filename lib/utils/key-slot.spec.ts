import calculateSlot from 'cluster-key-slot';
import { ADVERSARIAL_KEYS } from '../../test/contract/lock-store.contract.js';
import { keySlot } from './key-slot.js';
import { resourceKeys } from '../stores/redis/resource-keys.js';

describe('keySlot', () => {
  it('matches the published CRC16 test vector: "123456789" hashes to 0x31C3', () => {
    expect(keySlot('123456789')).toBe(0x31c3 % 16384);
  });

  it('hashes only the first non-empty hash tag, as the server does', () => {
    expect(keySlot('{user1000}.following')).toBe(keySlot('user1000'));
    expect(keySlot('foo{{bar}}zap')).toBe(keySlot('{bar'));
    // an empty first tag means the whole key is hashed (cluster-key-slot, which ioredis routes by, differs here)
    expect(keySlot('foo{}{bar}')).not.toBe(keySlot('bar'));
    expect(keySlot('a{b')).toBe(13340);
  });

  it('agrees with the slot ioredis routes by for every resource key the store writes', () => {
    for (const key of [...ADVERSARIAL_KEYS, 'orders:42', '{}', '']) {
      const { lock, fence, channel } = resourceKeys('lock:', key);
      for (const name of [lock, fence, channel]) expect(keySlot(name)).toBe(calculateSlot(name));
    }
  });
});
