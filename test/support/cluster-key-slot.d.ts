/** Types for cluster-key-slot (a dependency of ioredis without its own): the CRC16 slot Redis Cluster gives a key. */
declare module 'cluster-key-slot' {
  /** The hash slot (0..16383) of `key`, honouring `{hash tags}`. */
  export default function calculateSlot(key: string | Buffer): number;
}
