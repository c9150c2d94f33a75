import { readClusterSlots } from './glide-topology.js';

describe('readClusterSlots', () => {
  it('maps each slot to its master and lists each master once, replicas left out', () => {
    const reply = [
      [0, 5460, ['127.0.0.1', 7000, 'a'], ['127.0.0.1', 7003, 'd']],
      [5461, 10922, ['127.0.0.1', 7001, 'b']],
      [10923, 16383, ['127.0.0.1', 7002, 'c']],
      [16000, 16000, ['127.0.0.1', 7002, 'c']],
    ];
    const topology = readClusterSlots(reply);
    expect(topology.masters).toEqual([
      { host: '127.0.0.1', port: 7000 },
      { host: '127.0.0.1', port: 7001 },
      { host: '127.0.0.1', port: 7002 },
    ]);
    expect(topology.slots[0]).toEqual(['127.0.0.1:7000']);
    expect(topology.slots[5461]).toEqual(['127.0.0.1:7001']);
    expect(topology.slots[16383]).toEqual(['127.0.0.1:7002']);
    expect(topology.slots).toHaveLength(16384);
  });

  it('knows nothing from a reply that is not a slot table', () => {
    expect(readClusterSlots('ERR This instance has cluster support disabled')).toEqual({ slots: [], masters: [] });
  });
});
