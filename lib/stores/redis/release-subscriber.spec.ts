import { EventEmitter } from 'node:events';
import { ReleaseSubscriber } from './release-subscriber.js';
import type { SubscriberPort } from './slot-routed-subscriber.js';

/** A subscriber connection that subscribes at once and drops or comes back when the test says so. */
class FakeConnection extends EventEmitter {
  subscribe = async (): Promise<number> => 1;
  unsubscribe = async (): Promise<number> => 0;
  disconnect = (): void => undefined;
}

describe('ReleaseSubscriber', () => {
  it('says its watches may have missed notices once the connection drops, and wakes them when it is back', async () => {
    const connection = new FakeConnection();
    const subscriber = new ReleaseSubscriber(() => connection as unknown as SubscriberPort);
    const watch = await subscriber.watch('lock:{a}:released', 0);
    connection.emit('ready');
    expect(watch.listeningSince).toEqual(expect.any(Number));

    // a waiter told of its turn by notices must not count on them from here on
    connection.emit('close');
    expect(watch.listeningSince).toBeUndefined();
    // a watch made now starts without cover too
    const later = await subscriber.watch('lock:{a}:released', 0);
    expect(later.listeningSince).toBeUndefined();

    const woken = watch.next(10_000);
    connection.emit('ready');
    await expect(woken).resolves.toBe(true);
    await subscriber.close();
  });
});
