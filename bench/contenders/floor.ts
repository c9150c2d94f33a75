import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { ALL_ROLES, TTL, retryingSession, type Held, type Library } from './contender.js';

/** How long the floor sleeps between two SET NX attempts while the key is held. */
export const FLOOR_POLL_MS = 1;

const FLOOR_RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** The least a correct lock does: `SET NX PX` to take, a token-checked delete by EVALSHA to release. */
export const floor: Library = {
  name: 'floor',
  shared: false,
  roles: ALL_ROLES,
  kind: 'floor',
  waiting: `polls SET NX every ${FLOOR_POLL_MS} ms (setTimeout) while held`,
  async open(url) {
    const client = new Redis(url);
    const sha = (await client.script('LOAD', FLOOR_RELEASE)) as string;
    // the same retry wrapper as every other contender (it never gives up), so the bench's own cost is alike for all
    return retryingSession(
      () => false,
      async (key): Promise<Held> => {
        // Node's cached-entropy UUID: the cheapest crypto-random token there is, so the floor stays a floor
        const token = randomUUID();
        while ((await client.set(key, token, 'PX', TTL, 'NX')) !== 'OK') await sleep(FLOOR_POLL_MS);
        return { release: async () => void (await client.evalsha(sha, 1, key, token)) };
      },
      async () => void (await client.quit()),
    );
  },
};
