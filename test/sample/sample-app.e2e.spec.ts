import { Redis } from 'ioredis';
import { LockService } from '../../lib/index.js';
import { resourceKeys } from '../../lib/stores/redis/resource-keys.js';
import type { Account, Transfer } from '../../sample/accounts/accounts.service.js';
import type { StaleWriterOutcome } from '../../sample/ledger/ledger.controller.js';
import { LedgerService, type LedgerEntry } from '../../sample/ledger/ledger.service.js';
import type { Sale } from '../../sample/inventory/inventory.service.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';
import { request, requestServed, startSample, until, type RunningSample } from './start-sample.js';
import { channelListeners } from '../support/channel-listeners.js';

describe('the sample app, two instances on one Redis', () => {
  const keyPrefix = uniquePrefix();
  const admin = new Redis(testRedisUrl());
  let a: RunningSample;
  let b: RunningSample;

  beforeAll(async () => {
    [a, b] = await Promise.all([
      startSample({ redisUrl: testRedisUrl(), keyPrefix, instanceId: 'a' }),
      startSample({ redisUrl: testRedisUrl(), keyPrefix, instanceId: 'b' }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), admin.quit()]);
  });

  describe('POST /inventory/:productId/purchase', () => {
    it('sells exactly the 10 units in stock to 40 concurrent buyers on both instances; the rest get 422', async () => {
      expect((await request('PUT', `${a.url}/inventory/p1`, { stock: 10 })).status).toBe(200);
      const responses = await Promise.all(
        // buyers retry a 409 as a client would: on a loaded machine 40 turns can outlast the sample's 3 s wait
        Array.from({ length: 40 }, (_, i) =>
          requestServed<Sale>('POST', `${(i % 2 ? a : b).url}/inventory/p1/purchase`),
        ),
      );
      const sales = responses.filter((r) => r.status === 201).map((r) => r.body);
      expect(sales).toHaveLength(10);
      expect(responses.filter((r) => r.status === 422)).toHaveLength(30);
      expect(sales.map((sale) => sale.left).sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      // the read-modify-writes took turns: none started before the previous one had finished
      const byStart = [...sales].sort((x, y) => x.startedAt - y.startedAt);
      for (let i = 1; i < byStart.length; i++) {
        expect(byStart[i].startedAt).toBeGreaterThanOrEqual(byStart[i - 1].finishedAt);
      }
      expect((await request('GET', `${b.url}/inventory/p1`)).body).toEqual({ productId: 'p1', stock: 0 });
    });

    it('waits for a holder on the other instance and sells once it releases, instead of answering 409', async () => {
      await request('PUT', `${a.url}/inventory/p2`, { stock: 1 });
      const held = await a.app.get(LockService).acquire('inventory:p2');
      const purchase = request<Sale>('POST', `${b.url}/inventory/p2/purchase`);
      // the buyer is waiting once it listens for the key's release notice
      const { channel } = resourceKeys(`${keyPrefix}lock:`, 'inventory:p2');
      await until(async () => (await channelListeners(admin, channel)) > 0);
      const releasedAt = performance.timeOrigin + performance.now();
      await held.release();
      const response = await purchase;
      expect(response.status).toBe(201);
      expect(response.body.left).toBe(0);
      expect(response.body.startedAt).toBeGreaterThanOrEqual(releasedAt);
    });

    it('sells once to a purchase retried with one Idempotency-Key: 409 while it runs, then the same sale replayed', async () => {
      await request('PUT', `${a.url}/inventory/p5`, { stock: 5 });
      const key = { 'Idempotency-Key': '"sample-retry-1"' };
      // the first attempt claims the key, then waits for the product's lock, held here
      const held = await a.app.get(LockService).acquire('inventory:p5');
      const first = request<Sale>('POST', `${b.url}/inventory/p5/purchase`, undefined, key);
      const { channel } = resourceKeys(`${keyPrefix}lock:`, 'inventory:p5');
      await until(async () => (await channelListeners(admin, channel)) > 0);
      const duplicate = await request('POST', `${a.url}/inventory/p5/purchase`, undefined, key);
      expect(duplicate.status).toBe(409);
      expect(Number(duplicate.headers.get('retry-after'))).toBeGreaterThanOrEqual(0);
      await held.release();
      const sold = await first;
      expect(sold.status).toBe(201);
      expect(sold.headers.get('idempotent-replayed')).toBeNull();

      for (const instance of [a, b]) {
        const retry = await request<Sale>('POST', `${instance.url}/inventory/p5/purchase`, undefined, key);
        expect(retry.status).toBe(201);
        expect(retry.headers.get('idempotent-replayed')).toBe('true');
        expect(retry.body).toEqual(sold.body);
      }
      expect((await request('GET', `${a.url}/inventory/p5`)).body).toEqual({ productId: 'p5', stock: 4 });
      // another buyer's key is another purchase
      const other = await request<Sale>('POST', `${a.url}/inventory/p5/purchase`, undefined, {
        'Idempotency-Key': '"sample-retry-2"',
      });
      expect(other.status).toBe(201);
      expect(other.body.id).not.toBe(sold.body.id);
      expect(other.body.left).toBe(3);
    });

    it('answers 400 to a restock without a whole number of units', async () => {
      for (const body of [{}, { stock: -1 }, { stock: 1.5 }, { stock: '3' }]) {
        expect((await request('PUT', `${a.url}/inventory/p3`, body)).status).toBe(400);
      }
    });
  });

  describe('POST /accounts/transfers', () => {
    it('runs 60 transfers in opposite directions at once on both instances without lost update, each served', async () => {
      await request('PUT', `${a.url}/accounts/alice`, { balance: 1000 });
      await request('PUT', `${b.url}/accounts/bob`, { balance: 1000 });
      const responses = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          requestServed<Transfer>(
            'POST',
            `${(i % 4 < 2 ? a : b).url}/accounts/transfers`,
            i % 2 ? { from: 'alice', to: 'bob', amount: 3 } : { from: 'bob', to: 'alice', amount: 2 },
          ),
        ),
      );
      // each client retries a 409 as Retry-After says (60 turns can outlast the 5 s wait on a loaded machine);
      // the two accounts are taken all or none, so every transfer goes through and none is lost
      expect(responses.map((r) => r.status)).toEqual(Array(60).fill(201));
      const alice = (await request<Account>('GET', `${b.url}/accounts/alice`)).body;
      const bob = (await request<Account>('GET', `${a.url}/accounts/bob`)).body;
      expect(alice.balance).toBe(1000 - 30 * 3 + 30 * 2);
      expect(bob.balance).toBe(1000 + 30 * 3 - 30 * 2);
    });

    it('refuses a transfer the balance does not cover with 422 and leaves both balances as they were', async () => {
      await request('PUT', `${a.url}/accounts/carol`, { balance: 10 });
      await request('PUT', `${a.url}/accounts/dave`, { balance: 0 });
      const response = await request('POST', `${b.url}/accounts/transfers`, { from: 'carol', to: 'dave', amount: 11 });
      expect(response.status).toBe(422);
      expect((await request<Account>('GET', `${a.url}/accounts/carol`)).body.balance).toBe(10);
      expect((await request<Account>('GET', `${a.url}/accounts/dave`)).body.balance).toBe(0);
    });

    it('answers 404 for an account never opened and 400 for a transfer to the same account', async () => {
      expect(
        (await request('POST', `${a.url}/accounts/transfers`, { from: 'nobody', to: 'alice', amount: 1 })).status,
      ).toBe(404);
      expect(
        (await request('POST', `${a.url}/accounts/transfers`, { from: 'alice', to: 'alice', amount: 1 })).status,
      ).toBe(400);
    });
  });

  describe('the fenced ledger', () => {
    it('writes each entry with the fence of its lock, growing with every write from either instance', async () => {
      const fences: number[] = [];
      for (const instance of [a, b, a, b]) {
        const response = await request<LedgerEntry>('POST', `${instance.url}/ledger/acc1/entries`, { text: 'x' });
        expect(response.status).toBe(201);
        fences.push(response.body.fence);
      }
      expect(fences).toEqual([...fences].sort((x, y) => x - y));
      expect(new Set(fences).size).toBe(4);
    });

    it("refuses the write of a writer whose lease expired, after the next holder's write (409 over HTTP)", async () => {
      const { status, body } = await request<StaleWriterOutcome>('POST', `${a.url}/ledger/acc2/stale-writer`);
      expect(status).toBe(201);
      expect(body.b).toEqual({ fence: expect.any(Number), accepted: true });
      expect(body.a.accepted).toBe(false);
      expect(body.a.fence).toBeLessThan(body.b.fence);
      expect(body.a.refusal).toContain(`fence ${body.a.fence}`);
      expect(body.entries.map((entry) => entry.fence)).toEqual([body.b.fence]);
    });

    it('refuses a lower fence than one it accepted, whoever writes it', async () => {
      const ledger = b.app.get(LedgerService);
      await ledger.write('acc3', 7, 'first');
      await ledger.write('acc3', 7, 'same holder again');
      await expect(ledger.write('acc3', 6, 'late')).rejects.toMatchObject({ status: 409, highest: 7 });
      expect((await ledger.entries('acc3')).map((entry) => entry.text)).toEqual(['first', 'same holder again']);
    });
  });
});

describe('the sample app without Redis', () => {
  it('runs on the memory store and memory data: purchases, transfers and the fenced ledger work', async () => {
    const sample = await startSample({ redisUrl: undefined, instanceId: 'solo' });
    try {
      await request('PUT', `${sample.url}/inventory/p1`, { stock: 2 });
      const statuses = await Promise.all(
        Array.from({ length: 5 }, () => request('POST', `${sample.url}/inventory/p1/purchase`).then((r) => r.status)),
      );
      expect(statuses.sort()).toEqual([201, 201, 422, 422, 422]);
      await request('PUT', `${sample.url}/accounts/x`, { balance: 5 });
      await request('PUT', `${sample.url}/accounts/y`, { balance: 5 });
      expect(
        (await request('POST', `${sample.url}/accounts/transfers`, { from: 'x', to: 'y', amount: 5 })).status,
      ).toBe(201);
      const stale = await request<StaleWriterOutcome>('POST', `${sample.url}/ledger/z/stale-writer`);
      expect(stale.body.a.accepted).toBe(false);
    } finally {
      await sample.close();
    }
  });
});
