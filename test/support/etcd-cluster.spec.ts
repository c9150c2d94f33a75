import { existsSync } from 'node:fs';
import { startEtcdCluster, type EtcdClusterHandle } from './etcd-cluster.js';

/** Puts and reads a key over the HTTP gateway of `url`; resolves the value read, or throws when it cannot. */
async function roundTrip(url: string, key: string): Promise<string> {
  const body = (value: object) => ({ method: 'POST', body: JSON.stringify(value), signal: AbortSignal.timeout(3000) });
  const encoded = Buffer.from(key).toString('base64');
  await fetch(`${url}/v3/kv/put`, body({ key: encoded, value: Buffer.from('v').toString('base64') }));
  const read = (await (await fetch(`${url}/v3/kv/range`, body({ key: encoded }))).json()) as {
    kvs?: Array<{ value: string }>;
  };
  return Buffer.from(read.kvs?.[0]?.value ?? '', 'base64').toString();
}

describe('startEtcdCluster', () => {
  let cluster: EtcdClusterHandle;

  beforeAll(async () => {
    cluster = await startEtcdCluster(3);
  }, 60_000);

  afterAll(() => cluster?.stop());

  it('starts three members on free ports that serve clients and agree on one leader', async () => {
    expect(cluster.members).toHaveLength(3);
    expect(new Set(cluster.hosts).size).toBe(3);
    for (const member of cluster.members) expect(await roundTrip(member.clientUrl, `k-${member.name}`)).toBe('v');
    expect(cluster.members).toContain(await cluster.leader());
  });

  it('elects another leader when the leader is killed, and takes the member back with its data', async () => {
    const leader = await cluster.leader();
    await leader.kill();
    expect(leader.running).toBe(false);
    const next = await waitFor(() => cluster.leader());
    expect(next).not.toBe(leader);
    await leader.start();
    expect(await roundTrip(leader.clientUrl, 'after-restart')).toBe('v');
  });

  it('freezes a member until it is resumed', async () => {
    const member = cluster.members[0];
    await member.pause();
    await expect(roundTrip(member.clientUrl, 'frozen')).rejects.toThrow();
    member.resume();
    expect(await waitFor(() => roundTrip(member.clientUrl, 'thawed'))).toBe('v');
  });

  it('restarts the whole cluster with its data, and removes the data folder when stopped', async () => {
    await roundTrip(cluster.members[1].clientUrl, 'kept');
    await cluster.restart();
    const read = await fetch(`${cluster.members[2].clientUrl}/v3/kv/range`, {
      method: 'POST',
      body: JSON.stringify({ key: Buffer.from('kept').toString('base64') }),
    });
    expect(((await read.json()) as { kvs?: unknown[] }).kvs).toHaveLength(1);
    const other = await startEtcdCluster(1);
    await other.stop();
    expect(existsSync(other.dataDir)).toBe(false);
  });
});

/** Retries `attempt` until it resolves (an election or a thaw takes a moment), for at most 10 s. */
async function waitFor<T>(attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
