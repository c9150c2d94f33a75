import { Redis } from 'ioredis';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { startChild, type ChildHandle } from '../support/child-process.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';

const app = fileURLToPath(new URL('./deploy-app.ts', import.meta.url));

/** One instance of the deploy app. */
interface Instance {
  readonly child: ChildHandle;
  readonly url: string;
}

async function startInstance(name: string, env: Record<string, string>): Promise<Instance> {
  const child = startChild(app, { ...env, INSTANCE: name });
  await child.waitFor('listening', 30_000);
  return { child, url: /listening (\S+)/.exec(child.output())![1] };
}

/** What a purchase answered. */
async function purchase(instance: Instance, product: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${instance.url}/inventory/${product}/purchase`, { method: 'POST' });
  return { status: response.status, body: await response.json() };
}

/** The lines an instance logged at WARN level (Nest prints them to stdout). */
function warnings(instance: Instance): string[] {
  return `${instance.child.output()}\n${instance.child.errorOutput()}`
    .split('\n')
    .filter((line) => line.includes('WARN'));
}

describe('a rolling deploy of two instances on one Redis, with the default ttl (30 s) and drain (5 s)', () => {
  const instances: Instance[] = [];
  let admin: Redis;

  beforeEach(() => {
    admin = new Redis(testRedisUrl());
  });

  afterEach(async () => {
    await Promise.all(instances.splice(0).map((instance) => instance.child.kill()));
    await admin.quit();
  });

  it('never lets the second instance in while the first still runs a 9 s section it was SIGTERMed 1 s into', async () => {
    const keyPrefix = uniquePrefix();
    const logKey = `${keyPrefix}-sections`;
    const env = { REDIS_URL: testRedisUrl(), KEY_PREFIX: keyPrefix, WORK_MS: '9000', LOG_KEY: logKey };
    const [first, second] = await Promise.all([startInstance('first', env), startInstance('second', env)]);
    instances.push(first, second);
    const product = `sku-${process.pid}-${Date.now()}`;

    const firstAnswer = purchase(first, product);
    await first.child.waitFor('entered', 30_000);
    const enteredAt = Date.now();
    // the second instance asks while the first holds the key, and waits its turn (wait: 30 s)
    const secondAnswer = purchase(second, product);
    await sleep(Math.max(0, enteredAt + 1000 - Date.now()));
    const exited = once(first.child.process, 'exit');
    first.child.process.kill('SIGTERM');

    expect(await firstAnswer).toEqual({ status: 201, body: { bought: product, by: 'first' } });
    await exited;
    const exitedAt = Date.now();
    expect(await secondAnswer).toEqual({ status: 201, body: { bought: product, by: 'second' } });

    const sections = (await admin.lrange(logKey, 0, -1)).map((line) => line.split(' '));
    await admin.del(logKey);
    expect(sections.map(([instance, event]) => `${instance} ${event}`)).toEqual([
      'first enter',
      'first leave',
      'second enter',
      'second leave',
    ]);
    const firstLeftAt = Number(sections[1][2]);
    expect(exitedAt).toBeGreaterThanOrEqual(firstLeftAt);
    // the drain's end, 5 s after the SIGTERM, is logged by template, never by the key a request resolved
    const lines = warnings(first);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/"inventory:<productId>".*drain of 5000 ms ended while its lease was held/),
        expect.stringMatching(/"inventory:<productId>".*released \d+ ms past the shutdown's drain/),
      ]),
    );
    for (const line of lines) expect(line).not.toContain(product);
  }, 90_000);
});
