import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startChild, type ChildHandle } from '../support/child-process.js';
import { startEtcdCluster, type EtcdClusterHandle } from '../support/etcd-cluster.js';
import { FencedResource, LostUpdateCounter, type SectionRecord } from '../support/invariants.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { ETCD_EXPIRY_LAG, testRedisUrl, uniquePrefix } from '../support/stores.js';

const leaderApp = fileURLToPath(new URL('./leader-app.ts', import.meta.url));

/** Where the instances keep the leader's lease, and how the test restarts it. */
interface LeaseStore {
  readonly name: string;
  /** The lease's ttl: etcd grants whole seconds, and no less than 2 s on the test cluster. */
  readonly ttl: number;
  /** How long after its ttl the store may take to end a lease nobody renews (etcd: its sweep, then a commit). */
  readonly expiryLag: number;
  start(): Promise<void>;
  env(): Record<string, string>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function redisStore(): LeaseStore {
  let server: RedisServerHandle | undefined;
  return {
    name: 'a Redis server',
    ttl: 1500,
    expiryLag: 0,
    async start() {
      server = await startRedisServer();
    },
    env: () => ({ LOCK_URL: server!.url }),
    async restart() {
      await server!.kill();
      await server!.start();
    },
    stop: async () => server?.stop(),
  };
}

function etcdStore(): LeaseStore {
  let cluster: EtcdClusterHandle | undefined;
  return {
    name: 'a 3-member etcd cluster',
    ttl: 2000,
    expiryLag: ETCD_EXPIRY_LAG,
    async start() {
      cluster = await startEtcdCluster(3);
    },
    env: () => ({ ETCD_HOSTS: JSON.stringify(cluster!.hosts) }),
    restart: async () => cluster!.restart(),
    stop: async () => cluster?.stop(),
  };
}

describe.each([redisStore(), etcdStore()])('instances campaigning for one leadership on $name', (store) => {
  const { ttl } = store;
  let data: Redis;
  let resource: FencedResource;
  let counter: LostUpdateCounter;
  let children: ChildHandle[];
  let checkerPrefix: string;

  beforeAll(() => store.start(), 60_000);
  afterAll(() => store.stop());

  beforeEach(() => {
    data = new Redis(testRedisUrl());
    checkerPrefix = uniquePrefix();
    resource = new FencedResource(data, checkerPrefix);
    counter = new LostUpdateCounter(data, checkerPrefix);
    children = [];
  });

  afterEach(async () => {
    await Promise.all(children.map((child) => child.kill()));
    await data.quit();
  });

  /** Starts `count` instances on one key prefix and waits until each is campaigning. */
  async function campaign(count: number): Promise<void> {
    const env = {
      ...store.env(),
      KEY_PREFIX: uniquePrefix(),
      DATA_URL: testRedisUrl(),
      CHECKER_PREFIX: checkerPrefix,
      TTL: String(ttl),
    };
    for (let index = 0; index < count; index++) children.push(startChild(leaderApp, { ...env, ID: `p${index}` }));
    await Promise.all(children.map((child) => child.waitFor('ready', 60_000)));
  }

  const sections = async (): Promise<SectionRecord[]> => (await resource.report(counter)).sections;

  /** The first term entered at or after `since` (`Date.now()`), waiting up to `timeout` ms for it. */
  async function termAfter(since: number, timeout = 20_000): Promise<SectionRecord> {
    const deadline = performance.now() + timeout;
    for (;;) {
      const found = (await sections()).find((section) => section.enteredAt >= since);
      if (found) return found;
      if (performance.now() > deadline) throw new Error(`no term began within ${timeout} ms`);
      await sleep(10);
    }
  }

  const indexOf = (section: SectionRecord): number => Number(section.sid.slice(1, section.sid.indexOf(':')));

  /** Every term so far, in the order they began, had a higher number than the one before. */
  async function expectIncreasingTerms(): Promise<void> {
    const fences = (await sections()).map((section) => section.fence);
    expect(fences.length).toBeGreaterThan(1);
    for (let i = 1; i < fences.length; i++) expect(fences[i]).toBeGreaterThan(fences[i - 1]);
  }

  it('elects one leader at a time; SIGKILL hands over once the lease ends, SIGTERM before it would', async () => {
    await campaign(3);
    const first = await termAfter(0);
    // the followers keep asking for a whole ttl, and are refused
    await sleep(ttl);
    expect(await sections()).toHaveLength(1);

    const killedAt = Date.now();
    await children[indexOf(first)].kill('SIGKILL');
    await resource.forgetKilled(`p${indexOf(first)}`);
    const second = await termAfter(killedAt, ttl + 5000);
    const afterKill = second.enteredAt - killedAt;

    const stoppedAt = Date.now();
    // a signal of its own: closing its stdin, as ChildHandle.kill does, would make it exit at once
    children[indexOf(second)].process.kill('SIGTERM');
    const third = await termAfter(stoppedAt);
    const afterStop = third.enteredAt - stoppedAt;

    // the lease ends by its ttl (and the store's lag); a second more for the followers' next ask on a busy machine
    expect(afterKill).toBeLessThan(ttl + store.expiryLag + 1000);
    // a resigning leader hands over at once: far sooner than a lease left to run out would
    expect(afterStop).toBeLessThan(ttl);
    await children[indexOf(second)].waitFor('closed');
    expect(children[indexOf(second)].output()).toMatch(/aborted resigned\nlate write accepted\nresigned\nclosed\n$/);
    const report = await resource.report(counter);
    expect(report.overlaps).toEqual([]);
    expect(report.fenced.staleRefused).toBe(0);
    expect(report.sections.map(indexOf)).toEqual([indexOf(first), indexOf(second), indexOf(third)]);
    await expectIncreasingTerms();
    console.log(`${store.name}: new leader ${afterKill} ms after SIGKILL (ttl ${ttl}), ${afterStop} ms after SIGTERM`);
  }, 120_000);

  it('elects another leader while the leader is frozen past its ttl; thawed, it is told and its write refused', async () => {
    await campaign(3);
    const first = await termAfter(0);
    const frozen = children[indexOf(first)];
    // it records its entry before it prints it: wait for the line, so a late one is not read as after the thaw
    await frozen.waitFor(`elected ${first.fence}\n`);
    const since = frozen.output().length;
    frozen.process.kill('SIGSTOP');
    const stoppedAt = Date.now();
    const second = await termAfter(stoppedAt, ttl + 5000);
    // the new leader writes with its higher term before the old one wakes
    await sleep(200);
    frozen.process.kill('SIGCONT');
    await frozen.waitFor('late write', 10_000, since);

    const woke = frozen.output().slice(since);
    expect(woke).toMatch(/^aborted (stalled|expired|taken)\n/);
    expect(woke).toContain('late write refused');
    expect(second.fence).toBeGreaterThan(first.fence);
    const report = await resource.report(counter);
    // the frozen leader was inside when the next one entered: it had the lower term, and it was told
    expect(report.overlaps).toEqual([{ older: first.sid, newer: second.sid, stale: first.sid, detected: true }]);
    expect(report.fenced.staleRefused).toBeGreaterThanOrEqual(1);
    await expectIncreasingTerms();
    console.log(`${store.name}: frozen leader replaced ${second.enteredAt - stoppedAt} ms after SIGSTOP (ttl ${ttl})`);
  }, 120_000);

  it('campaigns again when the function throws, and leads again after the store restarts', async () => {
    await campaign(2);
    const first = await termAfter(0);
    const thrownAt = Date.now();
    children[indexOf(first)].send('throw');
    const second = await termAfter(thrownAt);
    expect(children[indexOf(first)].output()).toContain('threw');
    expect(second.fence).toBeGreaterThan(first.fence);

    const restartedAt = Date.now();
    await store.restart();
    // a lease from before the restart ends within its ttl (etcd renews its leases when it restarts)
    await sleep(ttl + 1000);
    const third = (await sections()).find((section) => section.enteredAt >= restartedAt);
    const { accepted } = (await resource.report(counter)).fenced;
    await sleep(1000);
    const report = await resource.report(counter);

    // someone leads and writes again: the leader of before if it never lost its lease, else a new term
    expect(report.fenced.accepted).toBeGreaterThan(accepted + 5);
    expect(await resource.inside()).toHaveLength(1);
    expect(report.overlaps.every((overlap) => overlap.detected)).toBe(true);
    await expectIncreasingTerms();
    console.log(
      `${store.name}: after the restart, ${third ? `term ${third.sid} began ${third.enteredAt - restartedAt} ms after it began` : 'the leader kept its term'}`,
    );
  }, 120_000);
});
