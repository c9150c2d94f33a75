import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { setTimeoutAfterReads } from './timeout-after-reads.js';
import { blockEventLoop } from '../../test/support/faults.js';

describe('setTimeoutAfterReads', () => {
  let server: ReturnType<typeof createServer>;
  let client: Socket;
  let peer: Socket;

  beforeEach(async () => {
    server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const accepted = once(server, 'connection');
    client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    await once(client, 'connect');
    [peer] = (await accepted) as [Socket];
  });

  afterEach(async () => {
    client.destroy();
    peer.destroy();
    server.close();
    await once(server, 'close');
  });

  /** The order in which an answer sent during a stall and a deadline armed before it are seen. */
  async function orderAfterStall(arm: (fn: () => void, ms: number) => void): Promise<string[]> {
    const seen: string[] = [];
    const judged = new Promise<void>((resolve) =>
      arm(() => {
        seen.push('deadline');
        resolve();
      }, 20),
    );
    client.once('data', () => seen.push('answer'));
    peer.write('+OK\r\n');
    blockEventLoop(150);
    await judged;
    await new Promise((resolve) => setTimeout(resolve, 20));
    return seen;
  }

  it('judges a deadline after an answer that arrived while the event loop was blocked', async () => {
    // the case it exists for: a plain timer fires before the socket is read
    expect(await orderAfterStall((fn, ms) => setTimeout(fn, ms))).toEqual(['deadline', 'answer']);
    expect(await orderAfterStall((fn, ms) => setTimeoutAfterReads(fn, ms))).toEqual(['answer', 'deadline']);
  });

  it('is cancelled also between its timer and the deferred call', async () => {
    let called = 0;
    const cancel = setTimeoutAfterReads(() => called++, 5);
    // both timers are due in the same timers phase: the second cancels after the first has fired
    setTimeout(cancel, 6);
    blockEventLoop(30);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(called).toBe(0);
  });

  it('calls once when not cancelled', async () => {
    let called = 0;
    setTimeoutAfterReads(() => called++, 5);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(called).toBe(1);
  });
});
