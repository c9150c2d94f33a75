import { fileURLToPath } from 'node:url';
import { startChild, type ChildHandle } from '../../support/child-process.js';
import { startPostgresServer, type PostgresServerHandle } from '../../support/postgres-server.js';
import { uniquePrefix } from '../../support/stores.js';

const CONTENDER = fileURLToPath(new URL('./contender.child.ts', import.meta.url));

/** One section as a process printed it. */
interface Section {
  readonly process: number;
  readonly enter: number;
  readonly exit: number;
  readonly fence: number;
}

describe('PostgresLockStore across OS processes', () => {
  let server: PostgresServerHandle;
  let children: ChildHandle[] = [];
  const keyPrefix = uniquePrefix();

  beforeAll(async () => {
    server = await startPostgresServer();
  }, 60_000);

  afterEach(async () => {
    await Promise.all(children.map((child) => child.kill()));
    children = [];
  });

  afterAll(() => server?.destroy());

  /** Runs `count` processes of `sections` sections each on one key, started together; their sections by entry. */
  async function contend(count: number, sections: number, hold = 5): Promise<Section[]> {
    const env = {
      POSTGRES_URL: server.url,
      KEY_PREFIX: keyPrefix,
      KEY: 'shared',
      SECTIONS: String(sections),
      HOLD: String(hold),
    };
    const started = Array.from({ length: count }, () => startChild(CONTENDER, env));
    children.push(...started);
    // every process is connected and listening before any takes the key
    await Promise.all(started.map((child) => child.waitFor('ready', 20_000)));
    for (const child of started) child.send('go');
    await Promise.all(started.map((child) => child.waitFor('done', 60_000)));
    return started
      .flatMap((child, process) => {
        const out = child.output().split('\n');
        return out.flatMap((line, i) => {
          const enter = /^enter (\S+) (\d+)$/.exec(line);
          const exit = enter ? /^exit (\S+)$/.exec(out[i + 1] ?? '') : null;
          return enter && exit
            ? [{ process, enter: Number(enter[1]), exit: Number(exit[1]), fence: Number(enter[2]) }]
            : [];
        });
      })
      .sort((a, b) => a.enter - b.enter);
  }

  it('lets two processes take turns, never both inside, each fence above the last, the waiter served promptly', async () => {
    const sections = await contend(2, 40);
    expect(sections).toHaveLength(80);
    const overlaps = sections.slice(1).filter((section, i) => section.enter < sections[i].exit);
    expect(overlaps).toEqual([]);
    const fencesOutOfOrder = sections.slice(1).filter((section, i) => section.fence <= sections[i].fence);
    expect(fencesOutOfOrder).toEqual([]);
    // from one process's exit to the other's entry: its release, a NOTIFY and the waiter's grant
    const handoffs = sections
      .slice(1)
      .map((section, i) => ({ section, previous: sections[i] }))
      .filter(({ section, previous }) => section.process !== previous.process)
      .map(({ section, previous }) => section.enter - previous.exit)
      .sort((a, b) => a - b);
    expect(handoffs.length).toBeGreaterThan(10);
    const median = handoffs[Math.floor(handoffs.length / 2)];
    console.log(
      `hand-offs across processes: ${handoffs.length}, median ${median.toFixed(2)} ms, p90 ${handoffs[Math.floor(handoffs.length * 0.9)].toFixed(2)} ms`,
    );
    expect(median).toBeLessThan(50);
  }, 120_000);

  it('grants fences above every earlier one after a crash and a restart of the server', async () => {
    const before = await contend(2, 5);
    const highest = Math.max(...before.map((section) => section.fence));
    await server.kill();
    await server.start();
    const afterCrash = await contend(1, 2);
    expect(Math.min(...afterCrash.map((section) => section.fence))).toBeGreaterThan(highest);
    await server.stop();
    await server.start();
    const afterRestart = await contend(1, 2);
    expect(Math.min(...afterRestart.map((section) => section.fence))).toBeGreaterThan(
      Math.max(...afterCrash.map((section) => section.fence)),
    );
  }, 120_000);
});
