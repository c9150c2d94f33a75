import { Module, type INestApplication } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { LockModule } from '../../lib/index.js';
import { startApp, type Platform } from '../support/nest-app/create-app.js';
import type { StoreKind, StorePair } from '../support/stores.js';
import { AccountsController } from './fixtures/accounts.controller.js';
import { LEDGER, Ledger, ShopController } from './fixtures/shop.controller.js';

/** One HTTP answer, as a client reads it. */
interface Answer {
  readonly status: number;
  readonly body: unknown;
  readonly text: string;
  readonly headers: Headers;
}

/** Two app instances of the shop on one lock space (the store pair's two views), and the ledger they share. */
interface Shop {
  readonly urls: [string, string];
  readonly ledger: Ledger;
}

async function startShop(
  platform: Platform,
  pair: StorePair,
  ledger: Ledger,
): Promise<{
  urls: [string, string];
  apps: INestApplication[];
}> {
  const started = await Promise.all(
    [pair.store, pair.other].map((store) => {
      @Module({
        imports: [LockModule.forRoot({ store, ttl: '2s' })],
        controllers: [ShopController, AccountsController],
        providers: [{ provide: LEDGER, useValue: ledger }],
      })
      class ShopModule {}
      return startApp(platform, ShopModule);
    }),
  );
  return { urls: [started[0].url, started[1].url], apps: started.map(({ app }) => app) };
}

async function post(url: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // a text body stays text
  }
  return { status: response.status, body: parsed, text, headers: response.headers };
}

/**
 * The cases of issue #30 over real HTTP, on two app instances of `platform` sharing the lock space of `kind`
 * (the memory store: one store for both): every store that keeps records must pass all of them.
 */
export function describeIdempotency(kind: StoreKind, platforms: readonly Platform[] = ['express', 'fastify']): void {
  describe.each(platforms)(`@Idempotent() on %s, two instances on ${kind.name}`, (platform) => {
    let pair: StorePair;
    let apps: INestApplication[] = [];
    let shop: Shop;

    beforeEach(async () => {
      pair = await kind.create();
      const ledger = new Ledger();
      const started = await startShop(platform, pair, ledger);
      apps = started.apps;
      shop = { urls: started.urls, ledger };
    });

    afterEach(async () => {
      shop?.ledger.open();
      await Promise.all(apps.map((app) => app.close()));
      await pair?.close();
    });

    const purchase = (instance: 0 | 1, key: string | undefined, body: object, product = 'sku-1') =>
      post(
        `${shop.urls[instance]}/shop/${product}/purchase`,
        key === undefined ? {} : { 'idempotency-key': key },
        body,
      );

    it('answers concurrent duplicates with one 201 and one 409 with Retry-After, running the purchase once', async () => {
      const key = randomUUID();
      shop.ledger.closeGate();
      const first = purchase(0, key, { quantity: 2, hold: true });
      await shop.ledger.entered;
      const duplicate = await purchase(1, key, { quantity: 2, hold: true });
      expect(duplicate.status).toBe(409);
      expect(Number(duplicate.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(duplicate.body).toMatchObject({ statusCode: 409, code: 'LOCKED' });
      expect(duplicate.text).not.toContain(key);
      shop.ledger.open();
      expect((await first).status).toBe(201);
      expect(shop.ledger.runs.purchase).toBe(1);
      expect(shop.ledger.stock).toBe(98);
    });

    it('replays a later duplicate on the other instance: same body and status, the replay header, no second run', async () => {
      const key = randomUUID();
      const first = await purchase(0, key, { quantity: 3 });
      expect(first.status).toBe(201);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      const again = await purchase(1, key, { quantity: 3 });
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
      // the same JSON, fields in another order: the same request
      expect((await purchase(0, `"${key}"`, { quantity: 3 })).body).toEqual(first.body);
      expect(shop.ledger.runs.purchase).toBe(1);
      expect(shop.ledger.stock).toBe(97);
    });

    it('refuses the same key with another body, method or path with 422, running nothing', async () => {
      const key = randomUUID();
      expect((await purchase(0, key, { quantity: 1 })).status).toBe(201);
      const otherBody = await purchase(1, key, { quantity: 5 });
      expect(otherBody.status).toBe(422);
      expect(otherBody.body).toMatchObject({ statusCode: 422, code: 'IDEMPOTENCY_KEY_REUSED' });
      expect(otherBody.text).not.toContain(key);
      expect((await purchase(1, key, { quantity: 1 }, 'sku-2')).status).toBe(422);
      expect(shop.ledger.runs.purchase).toBe(1);
    });

    it('runs every request that has no key, as a handler without @Idempotent()', async () => {
      await purchase(0, undefined, { quantity: 1 });
      await purchase(1, undefined, { quantity: 1 });
      expect(shop.ledger.runs.purchase).toBe(2);
    });

    it('refuses a request without the required header (400) and one with a malformed key', async () => {
      const missing = await post(`${shop.urls[0]}/shop/strict`, {}, { ref: 'a' });
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({ code: 'IDEMPOTENCY_KEY_INVALID' });
      expect(String((missing.body as { message: string }).message)).toContain('X-Request-Id');
      const tooLong = await post(`${shop.urls[0]}/shop/strict`, { 'x-request-id': 'k'.repeat(256) }, { ref: 'a' });
      expect(tooLong.status).toBe(400);
      const key = randomUUID();
      const kept = await post(`${shop.urls[0]}/shop/strict`, { 'x-request-id': key }, { ref: 'a' });
      expect(kept.body).toMatchObject({ ref: 'a' });
      expect(kept.status).toBe(201);
      expect((await post(`${shop.urls[1]}/shop/strict`, { 'x-request-id': key }, { ref: 'a' })).body).toEqual(
        kept.body,
      );
      expect(shop.ledger.runs.strict).toBe(1);
    });

    it('keeps nothing for a 5xx, so the retry runs again and its answer is kept', async () => {
      const key = randomUUID();
      shop.ledger.failNext = true;
      expect((await post(`${shop.urls[0]}/shop/flaky`, { 'idempotency-key': key })).status).toBe(500);
      const retry = await post(`${shop.urls[1]}/shop/flaky`, { 'idempotency-key': key });
      expect(retry.status).toBe(201);
      const replay = await post(`${shop.urls[0]}/shop/flaky`, { 'idempotency-key': key });
      expect(replay.body).toEqual(retry.body);
      expect(shop.ledger.runs.flaky).toBe(2);
    });

    it('keeps a 4xx and replays it through the exception filters, with its body', async () => {
      const key = randomUUID();
      const first = await post(`${shop.urls[0]}/shop/refused`, { 'idempotency-key': key });
      expect(first.status).toBe(400);
      const again = await post(`${shop.urls[1]}/shop/refused`, { 'idempotency-key': key });
      expect(again.status).toBe(400);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(shop.ledger.runs.refused).toBe(1);
    });

    it("replays a kept 4xx as Nest's class it was, so a filter that caught it by class catches it again", async () => {
      const key = randomUUID();
      const first = await post(`${shop.urls[0]}/shop/sold-out`, { 'idempotency-key': key });
      expect(first.status).toBe(409);
      expect(first.body).toMatchObject({
        caughtAs: 'conflict',
        errorCode: 'SOLD_OUT',
        detail: { message: 'sold out' },
      });
      const again = await post(`${shop.urls[1]}/shop/sold-out`, { 'idempotency-key': key });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect({ status: again.status, body: again.body }).toEqual({ status: 409, body: first.body });
      expect(shop.ledger.runs['sold-out']).toBe(1);
    });

    it("replays a 4xx built from an error as Nest answered it, keeping none of the error's fields", async () => {
      const key = randomUUID();
      const first = await post(`${shop.urls[0]}/shop/taken`, { 'idempotency-key': key });
      expect({ status: first.status, body: first.body }).toEqual({
        status: 409,
        body: { statusCode: 409, message: 'Conflict' },
      });
      const again = await post(`${shop.urls[1]}/shop/taken`, { 'idempotency-key': key });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect({ status: again.status, body: again.body }).toEqual({ status: 409, body: first.body });
      expect(shop.ledger.runs.taken).toBe(1);
    });

    it("replays a pipe's refusal (400) through the filter that shaped it", async () => {
      const key = randomUUID();
      const first = await post(`${shop.urls[0]}/shop/count/many`, { 'idempotency-key': key });
      expect(first.status).toBe(400);
      expect(first.body).toMatchObject({ caughtAs: 'bad-request' });
      const again = await post(`${shop.urls[1]}/shop/count/many`, { 'idempotency-key': key });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect({ status: again.status, body: again.body }).toEqual({ status: 400, body: first.body });
      expect(shop.ledger.runs.count).toBeUndefined();
    });

    it('keeps the keys of two callers apart with a scope', async () => {
      const key = randomUUID();
      const ann = await post(`${shop.urls[0]}/shop/mine`, { 'idempotency-key': key, 'x-user': 'ann' });
      const bob = await post(`${shop.urls[1]}/shop/mine`, { 'idempotency-key': key, 'x-user': 'bob' });
      expect(bob.body).not.toEqual(ann.body);
      const annAgain = await post(`${shop.urls[1]}/shop/mine`, { 'idempotency-key': key, 'x-user': 'ann' });
      expect(annAgain.body).toEqual(ann.body);
      expect(shop.ledger.runs.mine).toBe(2);
    });

    it('replays the status the handler set on the response itself', async () => {
      const key = randomUUID();
      const first = await post(`${shop.urls[0]}/shop/queued`, { 'idempotency-key': key });
      expect(first.status).toBe(202);
      const again = await post(`${shop.urls[1]}/shop/queued`, { 'idempotency-key': key });
      expect(again.status).toBe(202);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(shop.ledger.runs.queued).toBe(1);
    });

    it('refuses a body no parser read (415), which it could not tell from another, and runs nothing', async () => {
      const send = (body: string) =>
        fetch(`${shop.urls[0]}/shop/note`, {
          method: 'POST',
          headers: { 'idempotency-key': randomUUID(), 'content-type': 'application/x-unknown' },
          body,
        });
      const answer = await send('transfer 10 to alice');
      expect(answer.status).toBe(415);
      // Fastify refuses a content type it has no parser for before any handler
      if (platform === 'express') expect(await answer.text()).toMatch(/no parser read/);
      expect(shop.ledger.runs.note).toBeUndefined();
    });

    it('replays a text body with the content type the first answer had', async () => {
      const key = randomUUID();
      const first = await post(`${shop.urls[0]}/shop/receipt`, { 'idempotency-key': key });
      const again = await post(`${shop.urls[1]}/shop/receipt`, { 'idempotency-key': key });
      expect(again.text).toBe(first.text);
      expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
      expect(shop.ledger.runs.receipt).toBe(1);
    });

    it('keeps what the class serializer sent: a field it left out is not replayed', async () => {
      for (const [path, route] of [
        ['accounts', 'account'],
        ['accounts/plain', 'plain account'],
      ]) {
        const key = randomUUID();
        const first = await post(`${shop.urls[0]}/${path}`, { 'idempotency-key': key });
        const again = await post(`${shop.urls[1]}/${path}`, { 'idempotency-key': key });
        expect(first.status).toBe(201);
        expect(first.text).not.toContain('argon2id');
        expect(again.headers.get('idempotent-replayed')).toBe('true');
        expect(again.body).toEqual(first.body);
        expect(shop.ledger.runs[route]).toBe(1);
      }
      // the group the handler names is kept as the serializer sent it
      const owner = await post(`${shop.urls[0]}/accounts`, { 'idempotency-key': randomUUID() });
      expect(owner.body).toMatchObject({ email: 'ann@example.test' });
    });
  });
}
