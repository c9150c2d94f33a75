import { Redis } from 'ioredis';
import type { PermitMode, PermitRequest } from '../../../lib/interfaces/permit-store.interface.js';
import { RedisPermitStore } from '../../../lib/stores/redis/permits/redis-permit-store.js';
import { resourceKeys } from '../../../lib/stores/redis/resource-keys.js';
import { newToken } from '../../../lib/utils/token.js';
import { ownRedisServer } from '../../support/own-redis-server.js';

/**
 * A release grants a freed permit straight to the first place in the line and tells its process on that
 * process's own channel. When that notice reaches nobody because the process does not listen there yet (its
 * first subscription is on its way), or because the releaser may not publish there (ACL), the waiter is alive
 * and keeps its turn: a reader that comes later does not overtake a waiting writer, and the writer is granted
 * when it asks again.
 */
const KEY = 'untold';
/** Long enough that no reservation lapses while a test runs on a loaded machine. */
const HANDOFF_WINDOW = 60_000;

const own = ownRedisServer();
const { cleanups } = own;

/** A store of its own connection and owner id: a process of its own, as the server sees it. */
function process(client = new Redis(own.server.url)): RedisPermitStore {
  const store = new RedisPermitStore({ client, handoffWindow: HANDOFF_WINDOW });
  cleanups.push(() => client.disconnect());
  cleanups.push(() => store.close());
  return store;
}

function permit(mode: PermitMode, waits = false): PermitRequest {
  return {
    key: KEY,
    token: newToken(),
    ttl: 30_000,
    fencing: true,
    shape: { mode },
    ...(waits ? { waiting: { ttl: 30_000, direct: true } } : {}),
  };
}

/** A client whose user may publish on the key's release channel but not on any process's own channel. */
async function clientDeniedOwnChannels(): Promise<Redis> {
  const { channel } = resourceKeys('lock:', KEY);
  // the exact channel only: ACL patterns are globs, so the pattern escapes what a glob would read
  const exact = channel.replace(/[*?[\]\\]/g, (char) => `\\${char}`);
  await own.admin.call('ACL', 'SETUSER', 'no-own-channels', 'on', '>pw', '~*', 'resetchannels', `&${exact}`, '+@all');
  cleanups.push(() => own.admin.call('ACL', 'DELUSER', 'no-own-channels'));
  return new Redis(own.server.url, { username: 'no-own-channels', password: 'pw' });
}

describe('RedisPermitStore grants whose notice is not heard', () => {
  it('keeps the turn of a writer that does not listen on its own channel yet, and grants it when it asks again', async () => {
    const [releaser, writer, reader] = [process(), process(), process()];
    const holder = permit('read');
    expect(await releaser.acquire(holder)).toMatchObject({ acquired: true });
    // refused before its release watch opened: nobody of its process listens on its own channel yet
    const waiting = permit('write', true);
    expect(await writer.acquire(waiting)).toMatchObject({ acquired: false, ahead: 0 });
    expect(await releaser.release(KEY, holder.token)).toBe(true);
    // a reader that comes later stands behind the writer
    expect(await reader.acquire(permit('read', true))).toMatchObject({ acquired: false, ahead: 1 });
    expect(await writer.acquire(waiting)).toEqual({ acquired: true, fence: expect.any(Number) });
    expect(await own.admin.exists(resourceKeys('lock:', KEY).lock)).toBe(1);
    expect(await releaser.inspect(KEY)).toMatchObject({ holders: 1, mode: 'write', waiting: 1 });
  });

  it('keeps the turn of a writer whose own channel the releaser may not publish on, and grants it when it asks again', async () => {
    const [releaser, writer, reader] = [process(await clientDeniedOwnChannels()), process(), process()];
    const holder = permit('read');
    expect(await releaser.acquire(holder)).toMatchObject({ acquired: true });
    // the writer listens on its own channel: its place leaves an offer for a release to grant directly
    const waiting = permit('write', true);
    const watch = await writer.watch(KEY, undefined, waiting.token);
    cleanups.push(() => watch.close());
    expect(await writer.acquire(waiting)).toMatchObject({ acquired: false, ahead: 0 });
    expect(await releaser.release(KEY, holder.token)).toBe(true);
    expect(await reader.acquire(permit('read', true))).toMatchObject({ acquired: false, ahead: 1 });
    expect(await writer.acquire(waiting)).toEqual({ acquired: true, fence: expect.any(Number) });
    expect(await releaser.inspect(KEY)).toMatchObject({ holders: 1, mode: 'write', waiting: 1 });
  });
});
