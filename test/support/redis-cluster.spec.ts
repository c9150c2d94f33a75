import { Cluster, Redis } from 'ioredis';
import { keySlot, startRedisCluster, type RedisClusterHandle } from './redis-cluster.js';

describe('startRedisCluster', () => {
  let cluster: RedisClusterHandle;
  let client: Cluster;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    // No slotsRefreshInterval: ioredis 6 re-arms that timer when a refresh is in flight during disconnect(),
    // and the process never exits. Connection errors and MOVED replies refresh the slots after a failover.
    client = new Cluster(cluster.startupNodes);
    client.on('error', () => undefined);
  }, 60_000);

  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  it('starts three masters with one replica each, every slot served', async () => {
    expect(cluster.nodes).toHaveLength(6);
    expect(cluster.nodes.filter((node) => node.role === 'master')).toHaveLength(3);
    expect(cluster.nodes.filter((node) => node.role === 'replica')).toHaveLength(3);
    expect(cluster.nodes.every((node) => node.running)).toBe(true);
    expect(cluster.startupNodes).toEqual(cluster.nodes.map(({ port }) => ({ host: '127.0.0.1', port })));
    for (const node of cluster.nodes) {
      const direct = new Redis(node.port, '127.0.0.1');
      const info = await direct.call('CLUSTER', 'INFO');
      direct.disconnect();
      expect(info).toMatch(/cluster_state:ok/);
      expect(info).toMatch(/cluster_slots_ok:16384/);
    }
  });

  it('computes the same slot as the server for plain and hash-tagged keys', async () => {
    const direct = new Redis(cluster.nodes[0]!.port, '127.0.0.1');
    const keys = [
      '',
      'foo',
      'lock:orders:42',
      '{user1000}.following',
      'foo{}{bar}',
      'foo{{bar}}zap',
      '{}x',
      'ключ',
      'a{b',
    ];
    for (const key of keys) expect(keySlot(key)).toBe(await direct.call('CLUSTER', 'KEYSLOT', key));
    direct.disconnect();
  });

  it('finds the master that holds a key written through a cluster client', async () => {
    await client.set('harness:placed', 'here');
    const master = await cluster.masterForKey('harness:placed');
    expect(cluster.nodes.find((node) => node.port === master)?.role).toBe('master');
    for (const node of cluster.nodes.filter(({ role }) => role === 'master')) {
      const direct = new Redis(node.port, '127.0.0.1');
      if (node.port === master) await expect(direct.get('harness:placed')).resolves.toBe('here');
      else await expect(direct.get('harness:placed')).rejects.toThrow(/MOVED/);
      direct.disconnect();
    }
  });

  it('promotes a replica after the master of a key is killed, and the cluster client writes again', async () => {
    const key = 'harness:failover';
    const oldMaster = await cluster.masterForKey(key);
    const replicas = await cluster.replicasOf(oldMaster);
    expect(replicas).toHaveLength(1);
    const direct = new Redis(oldMaster, '127.0.0.1');
    await direct.set(key, 'before');
    await expect(direct.call('WAIT', 1, 5000)).resolves.toBe(1);
    direct.disconnect();

    await cluster.killNode(oldMaster);
    expect(cluster.nodes.find((node) => node.port === oldMaster)?.running).toBe(false);
    const newMaster = await cluster.waitForFailover(oldMaster);

    expect(replicas).toContain(newMaster);
    await expect(cluster.masterForKey(key)).resolves.toBe(newMaster);
    expect(cluster.nodes.find((node) => node.port === newMaster)?.role).toBe('master');
    await expect(client.get(key)).resolves.toBe('before');
    await client.set(key, 'after');
    await expect(client.get(key)).resolves.toBe('after');
  }, 30_000);

  it('brings a killed master back as a replica of its successor', async () => {
    const oldMaster = cluster.nodes.find((node) => !node.running)!.port;
    await cluster.restartNode(oldMaster);
    const node = cluster.nodes.find(({ port }) => port === oldMaster)!;
    expect(node.running).toBe(true);
    expect(node.role).toBe('replica');
    await expect(cluster.replicasOf(await cluster.masterForKey('harness:failover'))).resolves.toEqual([oldMaster]);
  }, 30_000);

  it('gives up waiting for a failover with an error that says what it saw', async () => {
    const master = cluster.nodes.find((node) => node.role === 'master')!.port;
    await expect(cluster.waitForFailover(master, 300)).rejects.toThrow(
      `No replica took over from 127.0.0.1:${master} within 300 ms: 127.0.0.1:${master} still serves its slots.`,
    );
  });

  it('fails with a clear error when the killed node served no slots', async () => {
    const replica = cluster.nodes.find((node) => node.role === 'replica')!.port;
    await cluster.killNode(replica);
    await expect(cluster.waitForFailover(replica)).rejects.toThrow(/served no slots/);
    await cluster.restartNode(replica);
  }, 30_000);
});
