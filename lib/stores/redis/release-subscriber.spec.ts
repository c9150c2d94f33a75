import { performance } from 'node:perf_hooks';
import { EventEmitter } from 'node:events';
import { ReleaseSubscriber } from './release-subscriber.js';
import type { SubscriberPort } from './slot-routed-subscriber.js';

/** A subscriber connection that subscribes at once and drops or comes back when the test says so. */
class FakeConnection extends EventEmitter {
  subscribed: string[] = [];
  /** What the server does with each SUBSCRIBE: by default it takes it at once. */
  reply: () => Promise<number> = async () => 1;
  subscribe = (channel: string): Promise<number> => {
    this.subscribed.push(channel);
    return this.reply();
  };
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

  it('counts on its notices again once the server confirms its channels after a reconnect', async () => {
    const connection = new FakeConnection();
    const subscriber = new ReleaseSubscriber(() => connection as unknown as SubscriberPort);
    const both = await subscriber.watch(['lock:{a}:released', 'lock:{a}:released:me'], 0);
    const one = await subscriber.watch('lock:{a}:released', 0);
    connection.emit('ready');
    connection.emit('close');
    const dropped = performance.now();

    const answers = new Map<string, () => void>();
    connection.subscribe = (channel) => {
      connection.subscribed.push(channel);
      return new Promise((resolve) => answers.set(channel, () => resolve(1)));
    };
    connection.subscribed = [];
    connection.emit('ready');
    await new Promise(setImmediate);
    // asked again, each channel once; no cover until the server answers
    expect(connection.subscribed.sort()).toEqual(['lock:{a}:released', 'lock:{a}:released:me']);
    expect(both.listeningSince).toBeUndefined();
    // each channel is covered from its own answer; a watch once all of its channels are
    answers.get('lock:{a}:released')!();
    await new Promise(setImmediate);
    expect(one.listeningSince).toBeGreaterThanOrEqual(dropped);
    expect(both.listeningSince).toBeUndefined();
    answers.get('lock:{a}:released:me')!();
    await new Promise(setImmediate);
    expect(both.listeningSince).toBeGreaterThanOrEqual(one.listeningSince!);
    await subscriber.close();
  });

  it('takes no confirmation sent before the connection dropped again', async () => {
    const connection = new FakeConnection();
    const subscriber = new ReleaseSubscriber(() => connection as unknown as SubscriberPort);
    const watch = await subscriber.watch('lock:{a}:released', 0);
    connection.emit('ready');
    connection.emit('close');
    const answers: Array<() => void> = [];
    connection.reply = () => new Promise((resolve) => answers.push(() => resolve(1)));
    connection.emit('ready');
    await new Promise(setImmediate);
    expect(answers).toHaveLength(1);
    // the answer to that SUBSCRIBE comes after the next drop: it says nothing of the connection now
    connection.emit('close');
    answers[0]();
    await new Promise(setImmediate);
    expect(watch.listeningSince).toBeUndefined();
    await subscriber.close();
  });

  it('leaves a channel without cover when its confirmation fails', async () => {
    const connection = new FakeConnection();
    const subscriber = new ReleaseSubscriber(() => connection as unknown as SubscriberPort);
    const watch = await subscriber.watch('lock:{a}:released', 0);
    connection.emit('ready');
    connection.emit('close');
    connection.reply = () =>
      Promise.reject(new Error('NOPERM this user has no permissions to access one of the channels'));
    connection.subscribed = [];
    connection.emit('ready');
    await new Promise(setImmediate);
    expect(connection.subscribed).toEqual(['lock:{a}:released']);
    expect(watch.listeningSince).toBeUndefined();
    await subscriber.close();
  });
});
