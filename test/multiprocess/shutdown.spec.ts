import { Redis } from 'ioredis';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { STOP_GRACE } from '../../lib/core/lock-manager.js';
import { startChild, type ChildHandle } from '../support/child-process.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';

const app = fileURLToPath(new URL('./shutdown-app.ts', import.meta.url));
const jobApp = fileURLToPath(new URL('./job-shutdown-app.ts', import.meta.url));

interface Outcome {
  readonly status: number;
  readonly body: { code?: string; bought?: string; reset?: boolean };
}

/** A running instance of the shutdown app, the requests sent to it, and what is left of it in Redis. */
class Instance {
  private readonly requests: Array<Promise<Outcome>> = [];
  private url = '';

  private constructor(
    readonly child: ChildHandle,
    readonly prefix: string,
  ) {}

  static async start(env: { WORK_MS: string; DRAIN: string }): Promise<Instance> {
    const prefix = uniquePrefix();
    const child = startChild(app, { REDIS_URL: testRedisUrl(), KEY_PREFIX: prefix, ...env });
    const instance = new Instance(child, prefix);
    await child.waitFor('listening', 30_000);
    instance.url = /listening (\S+)/.exec(child.output())![1];
    return instance;
  }

  /** An instance of the app whose scheduled job runs until its signal aborts (no HTTP). */
  static async startJob(env: { DRAIN: string }): Promise<Instance> {
    const prefix = uniquePrefix();
    const child = startChild(jobApp, { REDIS_URL: testRedisUrl(), KEY_PREFIX: prefix, ...env });
    await child.waitFor('ready', 30_000);
    return new Instance(child, prefix);
  }

  /** Sends `count` purchases of one product at once. */
  burst(count: number): void {
    for (let i = 0; i < count; i++) {
      this.requests.push(
        fetch(`${this.url}/inventory/p1/purchase`, { method: 'POST' }).then(
          async (response) => ({ status: response.status, body: (await response.json()) as Outcome['body'] }),
          // the connection closed before an answer: the server never read the request
          () => ({ status: 0, body: { reset: true } }),
        ),
      );
    }
  }

  /** Resolves once `count` purchases have entered their locked section. */
  entered(count: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (this.enteredCount() < count) return;
        this.child.process.stdout?.off('data', check);
        this.child.process.off('exit', reject);
        resolve();
      };
      this.child.process.stdout?.on('data', check);
      this.child.process.once('exit', reject);
      check();
    });
  }

  enteredCount(): number {
    return this.child
      .output()
      .split('\n')
      .filter((line) => line === 'entered').length;
  }

  /** Sends SIGTERM and resolves how long the process took to exit, in ms. */
  async terminate(): Promise<number> {
    const started = performance.now();
    // a signal alone: the helper's kill() would also close stdin, which makes the app exit at once
    const exited = new Promise((resolve) => this.child.process.once('exit', resolve));
    this.child.process.kill('SIGTERM');
    await exited;
    return performance.now() - started;
  }

  outcomes(): Promise<Outcome[]> {
    return Promise.all(this.requests);
  }

  async keysLeft(): Promise<string[]> {
    const admin = new Redis(testRedisUrl());
    try {
      return await admin.keys(`${this.prefix}*`);
    } finally {
      await admin.quit();
    }
  }

  /** What the process logged at ERROR level (Nest prints those to stderr). */
  errors(): string[] {
    return `${this.child.output()}\n${this.child.errorOutput()}`.split('\n').filter((line) => line.includes('ERROR'));
  }
}

describe('a SIGTERM with enableShutdownHooks()', () => {
  let instance: Instance | undefined;

  afterEach(async () => {
    await instance?.child.kill();
    instance = undefined;
  });

  it('leaves no lock key in Redis after a burst of 50 requests on one key, and exits within the drain', async () => {
    instance = await Instance.start({ WORK_MS: '20', DRAIN: '5s' });
    instance.burst(50);
    await instance.entered(5);

    const exitTime = await instance.terminate();

    expect(await instance.keysLeft()).toEqual([]);
    expect(exitTime).toBeLessThan(5000);
    const outcomes = await instance.outcomes();
    const served = outcomes.filter((outcome) => outcome.status === 201);
    // every purchase that entered its section was served; every other one was refused as a shutdown (or, on a
    // busy machine, had not been read when the server closed its connections), never a crash
    expect(served).toHaveLength(instance.enteredCount());
    for (const outcome of outcomes.filter((o) => o.status !== 201)) {
      expect(outcome).toEqual(
        outcome.status === 0
          ? { status: 0, body: { reset: true } }
          : { status: 503, body: expect.objectContaining({ code: 'LOCK_UNAVAILABLE' }) },
      );
    }
    expect(instance.errors()).toEqual([]);
  }, 60_000);

  it('lets a holder inside its section finish within the drain instead of ending its lease at once', async () => {
    instance = await Instance.start({ WORK_MS: '1500', DRAIN: '5s' });
    instance.burst(1);
    await instance.entered(1);

    await instance.terminate();

    expect(await instance.outcomes()).toEqual([{ status: 201, body: { bought: 'p1' } }]);
    expect(await instance.keysLeft()).toEqual([]);
  }, 60_000);

  it('asks a holder that outlasts the drain to stop: its signal aborts, it answers 503 and lets its lease go, and the process exits', async () => {
    instance = await Instance.start({ WORK_MS: '60000', DRAIN: '1s' });
    instance.burst(1);
    await instance.entered(1);
    const started = performance.now();
    let answeredAfter = Infinity;
    void instance.outcomes().then(() => (answeredAfter = performance.now() - started));

    await instance.terminate();

    // the handler honours its signal: it stops at the drain's end, not after its 60 s of work
    expect(answeredAfter).toBeGreaterThanOrEqual(1000);
    expect(answeredAfter).toBeLessThan(3000);
    expect(await instance.outcomes()).toEqual([
      { status: 503, body: expect.objectContaining({ code: 'LOCK_LOST', resource: 'inventory:<productId>' }) },
    ]);
    expect(await instance.keysLeft()).toEqual([]);
  }, 60_000);

  it('lets a scheduled job that stops when asked let its lease go before the process exits', async () => {
    instance = await Instance.startJob({ DRAIN: '300ms' });
    await instance.child.waitFor('job entered', 30_000);

    const took = await instance.terminate();

    // nothing waits for a job as the HTTP server waits for its requests: the shutdown gives the holders it
    // asked to stop a moment to let go, or the process would exit with the lease held for its 30 s ttl
    expect(instance.child.output()).toContain('job stopped');
    const locks = (await instance.keysLeft()).filter((key) => !key.includes('tick:'));
    expect(locks).toEqual([]);
    expect(took).toBeLessThan(300 + STOP_GRACE + 2000);
  }, 60_000);
});
