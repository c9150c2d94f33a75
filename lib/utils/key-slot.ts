/** Number of hash slots of a Redis Cluster. */
const SLOTS = 16384;

const CRC16_TABLE = Uint16Array.from({ length: 256 }, (_, index) => {
  let crc = index << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  return crc;
});

/**
 * The Redis Cluster hash slot of a key, as the server computes it: CRC16 (XMODEM) of the key's UTF-8 bytes,
 * or of its first non-empty `{hash tag}`, modulo 16384. Computed here so the package needs no dependency
 * beyond ioredis itself.
 */
export function keySlot(key: string | Buffer): number {
  let bytes = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
  const open = bytes.indexOf(0x7b);
  if (open !== -1) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) bytes = bytes.subarray(open + 1, close);
  }
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >> 8) ^ byte) & 0xff];
  return crc % SLOTS;
}
