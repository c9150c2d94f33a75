import { Controller, Module, Param, Post, Query, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LockModule, WithLock, type LockContention, type LockModuleOptions } from '../../lib/index.js';
import { resourceKeys } from '../../lib/stores/redis/resource-keys.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';
import type { Platform } from '../support/nest-app/create-app.js';

/** Server-side data a key is made of: no client sends it, and none may read it in a response. */
const OWNER_EMAILS: Readonly<Record<string, string>> = { '7': 'alice@example.com' };

@Controller('owners')
class OwnersController {
  @Post(':id/hold')
  @WithLock((id: string) => `owner:${OWNER_EMAILS[id]}`)
  async hold(@Param('id') id: string, @Query('ms') ms = '0'): Promise<{ id: string }> {
    await sleep(Number(ms));
    return { id };
  }

  @Post(':id/history')
  @WithLock((id: string) => `owner:${OWNER_EMAILS[id].repeat(100)}`)
  history(@Param('id') id: string): { id: string } {
    return { id };
  }
}

@Controller('sections')
class SectionsController {
  @Post('usual')
  @WithLock('section:usual')
  async usual(@Query('ms') ms = '40'): Promise<string> {
    await sleep(Number(ms));
    return 'done';
  }

  @Post('fixed')
  @WithLock('section:fixed', { retryAfter: 7 })
  async fixed(@Query('ms') ms = '0'): Promise<string> {
    await sleep(Number(ms));
    return 'done';
  }

  @Post('computed')
  @WithLock('section:computed', {
    retryAfter: ({ keyTemplate, remainingTime }: LockContention) =>
      keyTemplate === 'section:computed' && remainingTime !== undefined ? 3 : 99,
  })
  async computed(@Query('ms') ms = '0'): Promise<string> {
    await sleep(Number(ms));
    return 'done';
  }
}

interface Running {
  readonly app: INestApplication;
  readonly url: string;
}

async function start(platform: Platform, options: LockModuleOptions): Promise<Running> {
  @Module({ imports: [LockModule.forRoot(options)], controllers: [OwnersController, SectionsController] })
  class AppModule {}
  const adapter = platform === 'express' ? new ExpressAdapter() : new FastifyAdapter();
  const app = await NestFactory.create(AppModule, adapter, { logger: false, abortOnError: false });
  await app.listen(0, '127.0.0.1');
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
}

describe.each<Platform>(['express', 'fastify'])('what a client is told on %s', (platform) => {
  let running: Running;
  let admin: Redis;
  let keyPrefix: string;
  const post = (path: string) => fetch(`${running.url}${path}`, { method: 'POST' });

  /** Starts `path` and resolves once its lock on `key` is in Redis, with the response still to come. */
  async function holding(path: string, key: string): Promise<{ response: Promise<Response> }> {
    const response = post(path);
    const lock = resourceKeys(keyPrefix, key).lock;
    while ((await admin.exists(lock)) === 0) await sleep(2);
    return { response };
  }

  beforeAll(async () => {
    keyPrefix = uniquePrefix();
    admin = new Redis(testRedisUrl());
    running = await start(platform, { redis: testRedisUrl(), keyPrefix, ttl: '30s' });
  });

  afterAll(async () => {
    await running.app.close();
    await admin.quit();
  });

  it('answers 409 without the resolved key a key function built from server data', async () => {
    const held = await holding('/owners/7/hold?ms=300', 'owner:alice@example.com');
    const busy = await post('/owners/7/hold');
    const body = await busy.text();
    expect(busy.status).toBe(409);
    expect(JSON.parse(body)).toMatchObject({ code: 'LOCKED', resource: 'OwnersController.hold' });
    expect(body).not.toContain('alice');
    expect((await held.response).status).toBe(201);
  });

  it('answers 400 for a key over maxKeyLength built from server data, without any part of it', async () => {
    const response = await post('/owners/7/history');
    const body = await response.text();
    expect(response.status).toBe(400);
    expect(JSON.parse(body)).toMatchObject({
      code: 'LOCK_KEY_INVALID',
      message: 'The lock key is over the limit of 1024 bytes; use shorter values.',
    });
    expect(body).not.toContain('alice');
  });

  it('tells a client to retry after 1 s, not after the 30 s lease, when the section usually takes 40 ms', async () => {
    for (let i = 0; i < 5; i++) expect((await post('/sections/usual?ms=40')).status).toBe(201);
    // this holder takes longer than usual, but its lease still has ~30 s to run: the usual hold decides
    const held = await holding('/sections/usual?ms=400', 'section:usual');
    const busy = await post('/sections/usual?ms=0');
    expect(busy.status).toBe(409);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(((await busy.json()) as { retryAfter: number }).retryAfter).toBe(1);
    expect((await held.response).status).toBe(201);
  });

  it('tells the Retry-After that the retryAfter option gives, as a number or a function of the contention', async () => {
    const fixed = await holding('/sections/fixed?ms=300', 'section:fixed');
    const busyFixed = await post('/sections/fixed');
    expect([busyFixed.status, busyFixed.headers.get('retry-after')]).toEqual([409, '7']);
    const computed = await holding('/sections/computed?ms=300', 'section:computed');
    const busyComputed = await post('/sections/computed');
    expect([busyComputed.status, busyComputed.headers.get('retry-after')]).toEqual([409, '3']);
    expect([(await fixed.response).status, (await computed.response).status]).toEqual([201, 201]);
  });
});
