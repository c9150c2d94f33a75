import { jest } from '@jest/globals';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { inspect } from 'node:util';
import { Test } from '@nestjs/testing';
import { LockModule, LockStoreError, type LockModuleOptions } from '../lib/index.js';
import { startChild, type ChildHandle } from './support/child-process.js';
import { nodeRedisClient } from './support/client-stores.js';
import { freePort, startRedisServer, type RedisServerHandle } from './support/redis-server.js';

const FIXTURE = 'test/support/nest-app/failed-bootstrap.ts';
/** Long enough for a child to load Nest and fail, on a loaded machine (a Node 22 run took over 15 s). */
const FAIL_TIMEOUT = 25_000;
/** From its failure to its exit: a client left reconnecting keeps a process alive for a minute or more. */
const EXIT_TIMEOUT = 5000;

/** Runs the failing bootstrap in a child; resolves what it printed once it exited by itself, or rejects. */
async function failedBootstrap(
  options: object,
  env: Record<string, string> = {},
): Promise<{ code: string; message: string }> {
  const child: ChildHandle = startChild(FIXTURE, { LOCK_OPTIONS: JSON.stringify(options), ...env });
  let running = true;
  const exited = new Promise<boolean>((resolve) => child.process.once('exit', () => resolve(!(running = false))));
  let timer: NodeJS.Timeout | undefined;
  const stuck = (ms: number) => new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    // the bootstrap's failure first (loading Nest takes long on a busy machine), then the exit, timed from it
    const failing = performance.now() + FAIL_TIMEOUT;
    while (running && !child.output().includes('failed ') && performance.now() < failing) await sleep(50);
    const ended = await Promise.race([exited, stuck(EXIT_TIMEOUT)]);
    const printed = child.output();
    if (!ended)
      throw new Error(
        `the process was still running ${EXIT_TIMEOUT} ms after failing: ${printed}${child.errorOutput()}`,
      );
    const line = printed.split('\n').find((text) => text.startsWith('failed '));
    if (!line) throw new Error(`the bootstrap did not fail: ${printed}${child.errorOutput()}`);
    return JSON.parse(line.slice('failed '.length)) as { code: string; message: string };
  } finally {
    clearTimeout(timer);
    await child.kill();
  }
}

/** Boots LockModule in this process; resolves what the bootstrap threw. */
async function bootError(options: LockModuleOptions): Promise<Error> {
  const ref = await Test.createTestingModule({ imports: [LockModule.forRoot(options)] }).compile();
  const app = ref.createNestApplication({ logger: false });
  try {
    await app.init();
  } catch (error) {
    await app.close().catch(() => undefined);
    return error as Error;
  }
  await app.close();
  throw new Error('the bootstrap did not fail');
}

// a test may wait for two children, each up to FAIL_TIMEOUT + EXIT_TIMEOUT
jest.setTimeout(2 * (FAIL_TIMEOUT + EXIT_TIMEOUT) + 10_000);

describe('a bootstrap that fails', () => {
  it('leaves nothing open when an option is refused: the process exits by itself, no client reconnecting', async () => {
    const port = await freePort();
    const outcome = await failedBootstrap({ redis: `redis://127.0.0.1:${port}`, ttl: 0 });
    expect(outcome).toMatchObject({ code: 'LOCK_CONFIGURATION', message: expect.stringMatching(/"ttl"/) });
  });

  it('leaves nothing open when the Redis it connected to refuses it, from forRoot and from forRootAsync', async () => {
    const port = await freePort();
    for (const env of [{}, { LOCK_ASYNC: '1' }] as Array<Record<string, string>>) {
      const outcome = await failedBootstrap({ redis: `redis://127.0.0.1:${port}` }, env);
      expect(outcome.code).toBe('LOCK_STORE_ERROR');
    }
  });

  it('leaves nothing open when a provider of the application fails after the lock store was built', async () => {
    const server = await startRedisServer();
    try {
      const outcome = await failedBootstrap({ redis: server.url }, { BROKEN_PROVIDER: '1' });
      expect(outcome.message).toBe('the database module is misconfigured');
    } finally {
      await server.stop();
    }
  });

  it('leaves nothing open when a Redlock quorum cannot be reached', async () => {
    const ports = await Promise.all([freePort(), freePort(), freePort()]);
    const outcome = await failedBootstrap({ redlock: { nodes: ports.map((port) => `redis://127.0.0.1:${port}`) } });
    expect(outcome.code).toBe('LOCK_STORE_ERROR');
  });
});

describe('a connection that fails at bootstrap', () => {
  let guarded: RedisServerHandle;

  beforeAll(async () => {
    guarded = await startRedisServer(['--requirepass', 'right-S3cr3t']);
  });

  afterAll(() => guarded.stop());

  it('names the node and ECONNREFUSED when nothing listens, and never the password of the URL', async () => {
    const port = await freePort();
    const error = await bootError({ redis: `redis://admin:S3cr3t@127.0.0.1:${port}` });
    expect(error).toBeInstanceOf(LockStoreError);
    expect(error.message).toBe(
      `Lock store failed to reach Redis at 127.0.0.1:${port}: connection refused (ECONNREFUSED)`,
    );
    expect(inspect(error, { depth: null, showHidden: true })).not.toContain('S3cr3t');
  });

  it('names the node and NOAUTH when the server wants a password and got none', async () => {
    const error = await bootError({ redis: guarded.url });
    expect(error).toBeInstanceOf(LockStoreError);
    expect(error.message).toMatch(
      new RegExp(`^Lock store failed to reach Redis at 127\\.0\\.0\\.1:${guarded.port}: .*NOAUTH`),
    );
  });

  it('names the node and WRONGPASS when the password is wrong, without either password', async () => {
    const error = await bootError({ redis: `redis://:wrong-S3cr3t@127.0.0.1:${guarded.port}` });
    expect(error.message).toMatch(new RegExp(`127\\.0\\.0\\.1:${guarded.port}: .*WRONGPASS`));
    const printed = inspect(error, { depth: null, showHidden: true });
    expect(printed).not.toContain('wrong-S3cr3t');
    expect(printed).not.toContain('right-S3cr3t');
  });

  it.each([6, 5] as const)(
    'names WRONGPASS, not NOAUTH, when the password of a node-redis %i client is wrong',
    async (major) => {
      const client = nodeRedisClient(major, `redis://:wrong-S3cr3t@127.0.0.1:${guarded.port}`);
      try {
        const error = await bootError({ redis: client });
        expect(error).toBeInstanceOf(LockStoreError);
        expect(error.message).toMatch(new RegExp(`127\\.0\\.0\\.1:${guarded.port}: .*WRONGPASS`));
        expect(inspect(error, { depth: null, showHidden: true })).not.toContain('wrong-S3cr3t');
      } finally {
        // refused at every reconnect: only destroy() ends it
        (client as unknown as { destroy(): void }).destroy();
      }
    },
  );

  it('names every Redlock node that refused the connection, and why', async () => {
    const ports = await Promise.all([freePort(), freePort(), freePort()]);
    const error = await bootError({ redlock: { nodes: ports.map((port) => `redis://127.0.0.1:${port}`) } });
    expect(error).toBeInstanceOf(LockStoreError);
    for (const port of ports) expect(error.message).toContain(`127.0.0.1:${port}: connection refused (ECONNREFUSED)`);
  });
});
