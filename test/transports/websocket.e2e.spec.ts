import { io, type Socket } from 'socket.io-client';
import { WebSocket } from 'ws';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';
import { startGatewayApp, type RunningGatewayApp } from './fixtures/gateway-app.js';

const LOCKED = {
  code: 'LOCKED',
  message: 'Resource "inventory:<productId>" is locked by another operation; retry later.',
  resource: 'inventory:<productId>',
  retryAfter: expect.any(Number),
};

/** Connects a socket.io client and resolves once it is connected. */
async function connectSocketIo(url: string, user = 'u1'): Promise<Socket> {
  const socket = io(url, { transports: ['websocket'], reconnection: false, auth: { user } });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('connect_error', reject);
  });
  return socket;
}

/** A `ws` client that keeps every message it receives, parsed. */
async function connectWs(url: string): Promise<{ socket: WebSocket; next: () => Promise<unknown> }> {
  const socket = new WebSocket(url);
  const received: unknown[] = [];
  const waiting: Array<(message: unknown) => void> = [];
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as unknown;
    const waiter = waiting.shift();
    if (waiter) waiter(message);
    else received.push(message);
  });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const next = (): Promise<unknown> =>
    received.length > 0 ? Promise.resolve(received.shift()) : new Promise((resolve) => waiting.push(resolve));
  return { socket, next };
}

describe('@WithLock on a socket.io gateway', () => {
  let running: RunningGatewayApp;
  let clients: Socket[];

  beforeEach(async () => {
    running = await startGatewayApp('socket.io', { redis: testRedisUrl(), keyPrefix: uniquePrefix() });
    clients = [await connectSocketIo(running.url), await connectSocketIo(running.url)];
  });

  afterEach(async () => {
    for (const client of clients) client.disconnect();
    await running.close();
  });

  it('acknowledges the second of two concurrent messages on one key with the LOCKED payload', async () => {
    const first = clients[0].emitWithAck('purchase', { productId: 'p1' });
    await running.gate.reached(1);

    const second = await clients[1].timeout(5000).emitWithAck('purchase', { productId: 'p1' });
    running.gate.open();

    expect(second).toEqual(LOCKED);
    expect(second.retryAfter).toBeGreaterThanOrEqual(1);
    expect(await first).toEqual({ bought: 'p1' });
    expect(running.gate.entered).toBe(1);
    expect(running.logger.errors()).toEqual([]);
  });

  it('reads <user.id> from the socket the connection handler authenticated: one checkout per user at a time', async () => {
    const otherUser = await connectSocketIo(running.url, 'u2');
    clients.push(otherUser);
    const first = clients[0].emitWithAck('checkout', { item: 'book' });
    await running.gate.reached(1);

    const sameUser = await clients[1].timeout(5000).emitWithAck('checkout', { item: 'book' });
    const other = otherUser.emitWithAck('checkout', { item: 'book' });
    await running.gate.reached(2);
    running.gate.open();

    expect(sameUser).toEqual({
      code: 'LOCKED',
      message: 'Resource "cart:<user.id>" is locked by another operation; retry later.',
      resource: 'cart:<user.id>',
      retryAfter: expect.any(Number),
    });
    expect(await first).toEqual({ checkedOut: 'book' });
    expect(await other).toEqual({ checkedOut: 'book' });
    expect(running.logger.errors()).toEqual([]);
  });

  it("emits the LOCKED payload as Nest's exception event to a client that asked for no acknowledgement", async () => {
    clients[0].emit('purchase', { productId: 'p2' });
    await running.gate.reached(1);

    const exception = new Promise((resolve) => clients[1].once('exception', resolve));
    clients[1].emit('purchase', { productId: 'p2' });
    expect(await exception).toEqual(LOCKED);
    running.gate.open();

    expect(running.gate.entered).toBe(1);
    expect(running.logger.errors()).toEqual([]);
  });
});

describe('@WithLock on a ws gateway', () => {
  let running: RunningGatewayApp;

  beforeEach(async () => {
    running = await startGatewayApp('ws', { redis: testRedisUrl(), keyPrefix: uniquePrefix() });
  });

  afterEach(async () => {
    await running.close();
  });

  it("answers the second of two concurrent messages on one key with Nest's exception event carrying the LOCKED payload", async () => {
    const [holder, contender] = [await connectWs(running.url), await connectWs(running.url)];
    try {
      holder.socket.send(JSON.stringify({ event: 'purchase', data: { productId: 'p1' } }));
      await running.gate.reached(1);

      contender.socket.send(JSON.stringify({ event: 'purchase', data: { productId: 'p1' } }));
      expect(await contender.next()).toEqual({ event: 'exception', data: LOCKED });
      running.gate.open();

      expect(await holder.next()).toEqual({ bought: 'p1' });
      expect(running.gate.entered).toBe(1);
      expect(running.logger.errors()).toEqual([]);
    } finally {
      holder.socket.close();
      contender.socket.close();
    }
  });
});
