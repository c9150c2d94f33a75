import { Redis } from 'ioredis';
import { startRedisSentinel, type MonitoredServer, type RedisSentinelHandle } from './redis-sentinel.js';

describe('startRedisSentinel', () => {
  let group: RedisSentinelHandle;
  const clients: Redis[] = [];

  /** A connection straight to a server, past its proxy; it ends, instead of reconnecting, when the server dies. */
  const direct = (server: MonitoredServer): Redis => {
    const client = new Redis({ host: '127.0.0.1', port: server.port, retryStrategy: () => null });
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  };
  const replicationOf = async (server: MonitoredServer): Promise<string> =>
    String(await direct(server).call('INFO', 'replication'));

  beforeAll(async () => {
    group = await startRedisSentinel();
  }, 60_000);

  afterAll(async () => {
    // an ended client is left alone: ioredis arms a 2 s timer on disconnect() of a closed socket
    for (const client of clients) if (client.status !== 'end') client.disconnect();
    await group?.stop();
  });

  it('starts a master with two replicas and three Sentinels that agree on it, every server behind its own proxy', async () => {
    expect(group.servers).toHaveLength(3);
    expect(group.sentinels).toHaveLength(3);
    const [master, ...replicas] = group.servers;
    expect(await group.master()).toBe(master);
    expect(await group.role(master)).toBe('master');
    for (const replica of replicas) {
      expect(await group.role(replica)).toBe('replica');
      // the link goes through the master's proxy, the address the Sentinels know it by
      expect(await replicationOf(replica)).toContain(`master_port:${master.announcedPort}`);
    }
    for (const server of group.servers) {
      expect(server.announcedPort).toBe(server.proxy.port);
      expect(group.clientOptions.natMap[`127.0.0.1:${server.announcedPort}`]).toEqual({
        host: '127.0.0.1',
        port: server.port,
      });
    }
  });

  it('cuts an isolated master off from its replicas while clients that reach it directly keep writing', async () => {
    const master = await group.master();
    const [writer, ...readers] = [master, ...group.servers.filter((server) => server !== master)].map(direct);
    await Promise.all([writer, ...readers].map((client) => client.ping()));
    // well within down-after-milliseconds, so that the Sentinels do not fail the master over
    group.isolate(master);
    await writer.set('harness:cut', 'only on the master');
    expect(await writer.call('WAIT', 2, 100)).toBe(0);
    for (const reader of readers) expect(await reader.get('harness:cut')).toBeNull();

    group.reconnect(master);
    expect(await writer.call('WAIT', 2, 5000)).toBe(2);
    for (const reader of readers) expect(await reader.get('harness:cut')).toBe('only on the master');
    await group.waitForHealthy();
    expect(await group.master()).toBe(master);
  }, 60_000);

  it('replaces a killed master with a replica that every Sentinel names, which the rest follow and clients find', async () => {
    const master = await group.master();
    const client = new Redis({ ...group.clientOptions, maxRetriesPerRequest: 1 });
    client.on('error', () => undefined);
    clients.push(client);
    await client.set('harness:before', 'kept');
    expect(await client.call('WAIT', 2, 5000)).toBe(2);

    await master.process.kill();
    const successor = await group.waitForFailover(master);
    expect(successor).not.toBe(master);
    expect(await group.role(successor)).toBe('master');
    expect(await group.role(master)).toBe('down');
    await group.waitForHealthy();
    expect(await group.master()).toBe(successor);
    const follower = group.servers.find((server) => server !== master && server !== successor)!;
    expect(await replicationOf(follower)).toContain(`master_port:${successor.announcedPort}`);
    expect(await client.get('harness:before')).toBe('kept');
    await client.set('harness:after', 'on the successor');
    expect(await direct(successor).get('harness:after')).toBe('on the successor');
  }, 60_000);
});
