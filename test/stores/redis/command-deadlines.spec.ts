import 'reflect-metadata';
import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cluster, Redis } from 'ioredis';
import { LockModule, LockService, LockStoreError } from '../../../lib/index.js';
import { CommandDeadlines, takeOverCommandTimeout } from '../../../lib/stores/redis/command-deadlines.js';
import { startRedisCluster, type RedisClusterHandle } from '../../support/redis-cluster.js';
import { blockEventLoop } from '../../support/faults.js';
import { startRedisServer, type RedisServerHandle } from '../../support/redis-server.js';

/** The command timeout of the clients made here: short, so the frozen cases take half a second each. */
const COMMAND_TIMEOUT = 500;
/**
 * How late a rejection may come on a loaded machine (timers and the event loop run late: 410 ms was seen with
 * both cores busy and more): a bound against a deadline missed by whole sweeps or never met, not a timing.
 */
const MARGIN = 1000;
/** How early: a deadline counts from the command's send, never from an earlier one. */
const EARLY = 50;

let server: RedisServerHandle;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server.stop();
});

/** What `operation` rejected with, and after how many ms. */
async function timed(operation: () => Promise<unknown>): Promise<{ message: string | undefined; elapsed: number }> {
  const start = performance.now();
  try {
    await operation();
    return { message: undefined, elapsed: performance.now() - start };
  } catch (error) {
    return { message: (error as Error).message, elapsed: performance.now() - start };
  }
}

/** A client as the store makes one: its `commandTimeout` moved from ioredis' timers to one deadline line. */
function ownedClient(url: string): Redis {
  const client = new Redis(url, { commandTimeout: COMMAND_TIMEOUT, maxRetriesPerRequest: 1, lazyConnect: true });
  client.on('error', () => undefined);
  takeOverCommandTimeout(client);
  return client;
}

/** A pipeline's results as one outcome: it resolves with each command's error beside the others' replies. */
function firstError(results: [Error | null, unknown][] | null): void {
  const error = results?.find(([failure]) => failure !== null)?.[0];
  if (error) throw error;
}

function expectTimedOut(outcomes: { message: string | undefined; elapsed: number }[]): void {
  for (const { message, elapsed } of outcomes) {
    expect(message).toBe('Command timed out');
    expect(elapsed).toBeGreaterThan(COMMAND_TIMEOUT - EARLY);
    expect(elapsed).toBeLessThan(COMMAND_TIMEOUT + MARGIN);
  }
}

describe('one deadline line instead of a timer per command', () => {
  it('rejects commands, scripts, pipelines and MULTI in time while the server is frozen', async () => {
    const client = ownedClient(server.url);
    client.defineCommand('echoKey', { numberOfKeys: 1, lua: "return redis.call('GET', KEYS[1])" });
    const echoKey = (key: string): Promise<unknown> =>
      (client as unknown as { echoKey(key: string): Promise<unknown> }).echoKey(key);
    try {
      await echoKey('sku:1');
      // ioredis arms no timer of its own: without the deadline line these would wait for as long as the freeze
      expect(client.options.commandTimeout).toBe(COMMAND_TIMEOUT);
      server.pause();
      const outcomes = await Promise.all([
        timed(() => client.get('sku:1')),
        timed(() => echoKey('sku:2')),
        timed(() => client.pipeline().get('sku:3').set('sku:4', 'x').exec().then(firstError)),
        timed(() => client.multi().incr('sku:5').get('sku:5').exec().then(firstError)),
      ]);
      expectTimedOut(outcomes);
    } finally {
      server.resume();
      client.disconnect();
    }
  });

  it('rejects a command in time that waits in the offline queue for a frozen server', async () => {
    server.pause();
    // the TCP connection is accepted by the kernel, the server's ready check is never answered
    const client = ownedClient(server.url);
    try {
      expectTimedOut([await timed(() => client.get('sku:offline'))]);
    } finally {
      server.resume();
      client.disconnect();
    }
  });

  it('counts each command from its own send, not from the oldest still awaited', async () => {
    const client = ownedClient(server.url);
    try {
      await client.ping();
      server.pause();
      const first = timed(() => client.get('sku:first'));
      await new Promise((resolve) => setTimeout(resolve, COMMAND_TIMEOUT / 2));
      const second = timed(() => client.get('sku:second'));
      expectTimedOut([await first, await second]);
    } finally {
      server.resume();
      client.disconnect();
    }
  });

  it('keeps no answered command: the line empties once the replies are in', async () => {
    const deadlines = new CommandDeadlines(COMMAND_TIMEOUT);
    const client = new Redis(server.url, { commandTimeout: COMMAND_TIMEOUT, lazyConnect: true });
    const send = client.sendCommand.bind(client);
    client.sendCommand = (...call: Parameters<Redis['sendCommand']>) => {
      deadlines.track(call[0]);
      return send(...call);
    };
    try {
      await client.ping();
      // on ioredis 5 a rejected command reads as unanswered until its deadline (the connection's CLIENT SETINFO
      // where the server refuses it): that delay is bounded by the timeout, and not what this test looks at
      await new Promise((resolve) => setTimeout(resolve, COMMAND_TIMEOUT + 50));
      await Promise.all(Array.from({ length: 2000 }, (_, index) => client.set(`sku:${index}`, index)));
      // the next command finds every earlier one answered and drops them
      await client.ping();
      await client.ping();
      expect(deadlines.size).toBeLessThanOrEqual(1);
    } finally {
      client.disconnect();
    }
  });

  it('leaves a command that is answered late but in time alone', async () => {
    const client = ownedClient(server.url);
    try {
      await client.set('sku:late', 'v');
      server.pause();
      const reply = client.get('sku:late');
      setTimeout(() => server.resume(), COMMAND_TIMEOUT / 2);
      await expect(reply).resolves.toBe('v');
    } finally {
      server.resume();
      client.disconnect();
    }
  });

  it('counts a reply that arrived while this process was blocked past the timeout as an answer', async () => {
    const client = ownedClient(server.url);
    try {
      await client.set('sku:stalled', 'v');
      const reply = client.get('sku:stalled');
      // the command is on the wire and answered at once, but this process reads nothing until the timeout is
      // past: the due timer runs before the socket is read, and must not call the answered command silent
      await new Promise((resolve) => setImmediate(resolve));
      blockEventLoop(COMMAND_TIMEOUT + 300);
      await expect(reply).resolves.toBe('v');
    } finally {
      client.disconnect();
    }
  });

  it('leaves ioredis its own timer where the option cannot be hidden, or there is no timeout to take over', () => {
    const readOnly = new Redis(server.url, { commandTimeout: COMMAND_TIMEOUT, lazyConnect: true });
    Object.defineProperty(readOnly.options, 'commandTimeout', { value: COMMAND_TIMEOUT, writable: false });
    const untimed = new Redis(server.url, { lazyConnect: true });
    takeOverCommandTimeout(readOnly);
    takeOverCommandTimeout(untimed);
    expect(Object.hasOwn(readOnly, 'sendCommand')).toBe(false);
    expect(Object.hasOwn(untimed, 'sendCommand')).toBe(false);
    readOnly.disconnect();
    untimed.disconnect();
  });

  it('fails LockService in time with the same words when the module’s own client gets no answer', async () => {
    @Module({ imports: [LockModule.forRoot({ redis: server.url })] })
    class OwnClientModule {}
    const app: INestApplicationContext = await NestFactory.createApplicationContext(OwnClientModule, {
      logger: false,
    });
    try {
      const locks = app.get(LockService);
      await (await locks.acquire('sku:warm', { autoRenew: false })).release();
      server.pause();
      const start = performance.now();
      const error = await locks.acquire('sku:frozen', { autoRenew: false }).catch((caught: unknown) => caught);
      const elapsed = performance.now() - start;
      expect(error).toBeInstanceOf(LockStoreError);
      expect((error as Error).message).toContain('no answer within 2000 ms (timeout)');
      expect(elapsed).toBeLessThan(2000 + MARGIN);
    } finally {
      server.resume();
      await app.close();
    }
  });
});

describe('one deadline line on a Cluster the store made', () => {
  let cluster: RedisClusterHandle;

  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 0, nodeTimeout: 5000 });
  }, 60_000);

  afterAll(async () => {
    await cluster.stop();
  });

  it('rejects a command in time on a frozen node, and commands to the other nodes are answered', async () => {
    const client = new Cluster(cluster.startupNodes, {
      lazyConnect: true,
      redisOptions: { commandTimeout: COMMAND_TIMEOUT, maxRetriesPerRequest: 1 },
    });
    client.on('error', () => undefined);
    takeOverCommandTimeout(client);
    const frozenPort = await cluster.masterForKey('sku:frozen');
    const node = new Redis(frozenPort, '127.0.0.1');
    const pid = Number(/process_id:(\d+)/.exec(await node.info('server'))![1]);
    node.disconnect();
    try {
      await client.set('sku:frozen', 'v');
      // every node connection has the line, or its commands would time out by ioredis' own timer
      const nodes = client.nodes('all');
      expect(nodes.length).toBeGreaterThanOrEqual(3);
      for (const connection of nodes) expect(Object.hasOwn(connection, 'sendCommand')).toBe(true);
      let otherKey = 'sku:0';
      for (let index = 1; (await cluster.masterForKey(otherKey)) === frozenPort; index++) otherKey = `sku:${index}`;
      process.kill(pid, 'SIGSTOP');
      const [frozen, other] = await Promise.all([timed(() => client.get('sku:frozen')), client.set(otherKey, 'v')]);
      expectTimedOut([frozen]);
      expect(other).toBe('OK');
    } finally {
      process.kill(pid, 'SIGCONT');
      client.disconnect();
    }
  });
});
