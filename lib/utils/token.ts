import { randomBytes } from 'node:crypto';

const TOKEN_BYTES = 16;
/** Random bytes drawn at once and cut into tokens: one CSPRNG call per 256 tokens instead of one each. */
const POOL_BYTES = TOKEN_BYTES * 256;
let pool = Buffer.alloc(0);
let offset = 0;

/** A fresh unguessable token for one acquisition (128 random bits, hex); no byte is ever used twice. */
export function newToken(): string {
  if (offset + TOKEN_BYTES > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const token = pool.toString('hex', offset, offset + TOKEN_BYTES);
  offset += TOKEN_BYTES;
  return token;
}
