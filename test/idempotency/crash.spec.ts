import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { startChild, type ChildHandle } from '../support/child-process.js';
import { postgresKind, testRedisUrl, uniquePrefix } from '../support/stores.js';

const app = fileURLToPath(new URL('./crash-app.ts', import.meta.url));

/** One instance of the crash app, as its own OS process. */
interface Instance {
  readonly child: ChildHandle;
  readonly url: string;
}

async function startInstance(env: Record<string, string>): Promise<Instance> {
  const child = startChild(app, env);
  await child.waitFor('listening', 30_000);
  return { child, url: /listening (\S+)/.exec(child.output())![1] };
}

function purchase(instance: Instance, key: string): Promise<Response> {
  return fetch(`${instance.url}/shop/sku-1/purchase`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ quantity: 1 }),
  });
}

/** Where the instances lock: the worker's Redis, or a PostgreSQL server of this file (started on first use). */
const stores: Record<string, () => Promise<Record<string, string>>> = {
  Redis: async () => ({}),
  PostgreSQL: async () => ({ POSTGRES_URL: (await postgresKind.server()).url }),
};

afterAll(() => postgresKind.stop());

describe.each(Object.keys(stores))(
  '@Idempotent() on %s when the process of the first request dies mid-handler',
  (store) => {
    const instances: Instance[] = [];
    let admin: Redis;

    // the server, if any, is up before the test's clock starts
    beforeAll(() => stores[store](), 60_000);

    beforeEach(() => {
      admin = new Redis(testRedisUrl());
    });

    afterEach(async () => {
      await Promise.all(instances.splice(0).map((instance) => instance.child.kill()));
      await admin.quit();
    });

    it('refuses retries while its lock lasts, then runs the retry once the lock ttl has passed', async () => {
      const keyPrefix = uniquePrefix();
      const logKey = `${keyPrefix}runs`;
      const env = {
        REDIS_URL: testRedisUrl(),
        ...(await stores[store]()),
        KEY_PREFIX: keyPrefix,
        LOCK_TTL: '1500',
        LOG_KEY: logKey,
      };
      const [doomed, survivor] = await Promise.all([
        startInstance({ ...env, INSTANCE: 'doomed', HANG: '1' }),
        startInstance({ ...env, INSTANCE: 'survivor' }),
      ]);
      instances.push(doomed, survivor);
      const key = randomUUID();

      const lost = purchase(doomed, key).catch((error: unknown) => error);
      await doomed.child.waitFor('entered', 20_000);
      await doomed.child.kill('SIGKILL');
      // the connection died with the process: no answer at all (fetch rejects)
      expect(String(await lost)).toMatch(/fetch failed/);
      const killedAt = Date.now();

      // the dead process's claim stands until its lease runs out: retries are told when to come back
      let answer = await purchase(survivor, key);
      const refusals: number[] = [];
      while (answer.status === 409 && refusals.length < 10) {
        const retryAfter = Number(answer.headers.get('retry-after'));
        refusals.push(retryAfter);
        await answer.arrayBuffer();
        await sleep(retryAfter * 1000);
        answer = await purchase(survivor, key);
      }
      expect(refusals.length).toBeGreaterThanOrEqual(1);
      expect(refusals.every((seconds) => seconds >= 1 && seconds <= 2)).toBe(true);
      expect(answer.status).toBe(201);
      expect(Date.now() - killedAt).toBeGreaterThanOrEqual(1000);
      const body = (await answer.json()) as { by: string; orderId: string };
      expect(body.by).toBe('survivor');

      const replay = await purchase(survivor, key);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await replay.json()).toEqual(body);
      expect(await admin.lrange(logKey, 0, -1)).toEqual(['doomed run', 'survivor run']);
      await admin.del(logKey);
    });
  },
);
