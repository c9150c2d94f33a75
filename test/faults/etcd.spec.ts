import { setTimeout as sleep } from 'node:timers/promises';
import { startEtcdCluster, type EtcdClusterHandle, type EtcdMemberHandle } from '../support/etcd-cluster.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import type { SectionRecord } from '../support/invariants.js';
import { Scenario, type ScenarioOptions, type ScenarioOutcome } from './scenario.js';

/** Fences in the order their sections entered: each must be above the one before. */
function fencesOutOfOrder(sections: readonly SectionRecord[]): string[] {
  const ordered = [...sections].sort((a, b) => a.enteredAt - b.enteredAt || a.fence - b.fence);
  const problems: string[] = [];
  for (let i = 1; i < ordered.length; i++) {
    if (ordered[i].fence <= ordered[i - 1].fence) {
      problems.push(
        `${ordered[i].sid} (fence ${ordered[i].fence}) after ${ordered[i - 1].sid} (${ordered[i - 1].fence})`,
      );
    }
  }
  return problems;
}

describe('etcd faults under three lock holders', () => {
  let cluster: EtcdClusterHandle;

  beforeAll(async () => {
    cluster = await startEtcdCluster(3);
  }, 60_000);

  afterEach(async () => {
    // every test leaves the cluster whole for the next
    for (const member of cluster.members) {
      member.resume();
      if (!member.running) await member.start();
    }
  });

  afterAll(() => cluster.stop());

  /**
   * A 6 s lease, renewed every 2 s: long enough to outlive an election (1.2 to 2.4 s here, more on a loaded
   * machine) plus a renewal that must first find a member that answers. Each call's deadline is 2 s (a
   * retry on another member gets its own). With `leasesCanBeLost`, an outage that outlasts the lease may
   * end it, which the holder must be told of; without, no two sections may ever overlap.
   */
  const options = (name: string, hosts: readonly string[], leasesCanBeLost = false): ScenarioOptions => ({
    name,
    processes: 3,
    lockUrl: '',
    // p0 stays inside its second section through the fault: a lease is certainly held while it happens
    worker: {
      sections: 12,
      holdMs: 100,
      ttl: 6000,
      wait: 20_000,
      commandTimeout: 2000,
      announce: true,
      pauseAt: 'p0:2',
      etcdHosts: hosts,
    },
    boundMs: 60_000,
    leasesCanBeLost,
  });

  /**
   * Runs a scenario, injecting `fault` once worker 0 is inside its second section, and lets worker 0 leave it
   * a second after the fault; returns what it found.
   */
  async function run(
    scenarioOptions: ScenarioOptions,
    fault: () => Promise<void>,
  ): Promise<{ outcome: ScenarioOutcome; scenario: Scenario; faultedAt: number }> {
    const scenario = await Scenario.start(scenarioOptions);
    try {
      scenario.go();
      await scenario.entered(0, 2, 30_000);
      const faultedAt = Date.now();
      await fault();
      await sleep(1000);
      scenario.resume(0);
      return { outcome: await scenario.finish(), scenario, faultedAt };
    } finally {
      await scenario.close();
    }
  }

  it('keeps one holder at a time, loses no update and grants increasing fences when the leader is SIGKILLed mid-section', async () => {
    let killed: EtcdMemberHandle | undefined;
    const { outcome, scenario } = await run(options('etcd: leader SIGKILLed mid-section', cluster.hosts), async () => {
      killed = await cluster.leader();
      await killed.kill();
    });
    const { report } = outcome;
    scenario.record(outcome, '1 SIGKILL of the etcd leader', `killed ${killed?.name}; a new leader took over`);

    expect(outcome.violations).toEqual([]);
    expect(report.overlaps).toEqual([]);
    expect(report.counter.lostUpdates).toBe(0);
    expect(report.fenced.lostUpdates).toBe(0);
    expect(fencesOutOfOrder(report.sections)).toEqual([]);
    expect(outcome.results.map((result) => result.completed)).toEqual([12, 12, 12]);
  });

  it('keeps the lease while the leader is frozen (open connections, no answers), or tells its holder it lost it', async () => {
    const { outcome, scenario } = await run(options('etcd: leader frozen 4 s', cluster.hosts, true), async () => {
      const leader = await cluster.leader();
      await leader.pause();
      await sleep(4000);
      leader.resume();
    });
    const { report } = outcome;
    scenario.record(outcome, '1 SIGSTOP of the etcd leader (4 s)');

    expect(outcome.violations).toEqual([]);
    expect(report.counter.lostUpdates).toBe(0);
    expect(fencesOutOfOrder(report.sections)).toEqual([]);
    expect(outcome.results.map((result) => result.completed)).toEqual([12, 12, 12]);
  });

  it('keeps the lease when the clients are cut off from the leader (a TCP proxy blackholed), or tells its holder', async () => {
    const proxies: FaultProxy[] = await Promise.all(
      cluster.members.map((member) => startFaultProxy({ port: Number(new URL(member.clientUrl).port) })),
    );
    try {
      const hosts = proxies.map((proxy) => `${proxy.host}:${proxy.port}`);
      const { outcome, scenario } = await run(
        options('etcd: clients cut off from the leader', hosts, true),
        async () => {
          const leader = await cluster.leader();
          proxies[cluster.members.indexOf(leader)].blackhole();
          await sleep(4000);
        },
      );
      scenario.record(outcome, "1 blackhole of the clients' path to the leader (to the end)");

      expect(outcome.violations).toEqual([]);
      expect(fencesOutOfOrder(outcome.report.sections)).toEqual([]);
      expect(outcome.results.map((result) => result.completed)).toEqual([12, 12, 12]);
    } finally {
      await Promise.all(proxies.map((proxy) => proxy.close()));
    }
  });

  it('keeps the lease of a holder across a restart of the whole cluster, or tells the holder it lost it', async () => {
    const { outcome, scenario, faultedAt } = await run(
      options('etcd: whole cluster restarted', cluster.hosts, true),
      async () => {
        await cluster.restart();
      },
    );
    const { report } = outcome;
    const straddling = report.sections.filter((s) => s.enteredAt <= faultedAt && (s.exitedAt ?? Infinity) > faultedAt);
    scenario.record(
      outcome,
      '1 restart of all 3 members (data kept)',
      `holders across the restart: ${straddling.map((s) => `${s.sid} ${s.lost ? `told ${s.lost.reason}` : 'kept it'}`).join(', ')}`,
    );

    expect(outcome.violations).toEqual([]);
    expect(report.counter.lostUpdates).toBe(0);
    expect(fencesOutOfOrder(report.sections)).toEqual([]);
    // revisions survive the restart: the fences after it are above every fence before it
    expect(outcome.results.map((result) => result.completed)).toEqual([12, 12, 12]);
  });
});
