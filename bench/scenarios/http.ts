// Scenario 9: one Nest endpoint served four ways, undecorated, taking the bench's floor lock by hand, taking
// LockService's lock by hand, and with @WithLock, over real HTTP (Express and Fastify): the first difference is
// what the two Redis round trips of any correct lock cost a request, the second what the engine adds to them on
// the user's path, the third what the decorator and the interceptor add to the engine.
import 'reflect-metadata';
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Controller, Inject, Module, Param, Post, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { LockModule, LockService, WithLock } from '../../lib/index.js';
import type { Session } from '../contenders/contender.js';
import { floor } from '../contenders/floor.js';

/** The floor's session of the app (`SET NX PX`, and a token-checked delete by `EVALSHA`). */
const FLOOR_SESSION = Symbol('floor session');

@Controller('items')
class ItemsController {
  constructor(
    @Inject(FLOOR_SESSION) private readonly floorLocks: Session,
    private readonly locks: LockService,
  ) {}

  @Post(':id/plain')
  plain(@Param('id') id: string) {
    return { id };
  }

  @Post(':id/floor')
  async floor(@Param('id') id: string) {
    const held = await this.floorLocks.acquire(`bench:item:${id}`);
    await held.release();
    return { id };
  }

  @Post(':id/service')
  async service(@Param('id') id: string) {
    // what a user writes without the decorator: the module's defaults, as @WithLock has them
    const lock = await this.locks.acquire(`bench:item:${id}`);
    try {
      return { id };
    } finally {
      await lock.release();
    }
  }

  @Post(':id/locked')
  @WithLock('bench:item:<id>')
  locked(@Param('id') id: string) {
    return { id };
  }
}

/** The ways the endpoint is served. */
export const ENDPOINTS = ['plain', 'floor', 'service', 'locked'] as const;
export type Endpoint = (typeof ENDPOINTS)[number];
export type Platform = 'express' | 'fastify';

/** A Nest app on a free port whose lock module uses the bench's Redis. */
export interface BenchApp {
  readonly platform: Platform;
  readonly port: number;
  close(): Promise<void>;
}

export async function startApp(platform: Platform, redisUrl: string): Promise<BenchApp> {
  const floorLocks = await floor.open(redisUrl);
  @Module({
    imports: [LockModule.forRoot({ redis: redisUrl })],
    controllers: [ItemsController],
    providers: [{ provide: FLOOR_SESSION, useValue: floorLocks }],
  })
  class BenchAppModule {}

  const app: INestApplication =
    platform === 'fastify'
      ? await NestFactory.create(BenchAppModule, new FastifyAdapter(), { logger: false, abortOnError: false })
      : await NestFactory.create(BenchAppModule, { logger: false, abortOnError: false });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  const close = async (): Promise<void> => {
    await app.close();
    await floorLocks.close();
  };
  return { platform, port: address.port, close };
}

let nextId = 0;
/** A fresh item id per request: every locked request takes a key nobody holds (the cost, not contention). */
const path = (endpoint: Endpoint): string => `/items/${nextId++}/${endpoint}`;

/**
 * Sends requests one after another on one keep-alive connection for `ms` and returns each one's latency in
 * ms (autocannon keeps whole milliseconds only, too coarse for the difference measured here).
 */
export async function sequentialRequests(app: BenchApp, endpoint: Endpoint, ms: number, agent: Agent) {
  const latencies: number[] = [];
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const started = performance.now();
    const status = await post(app.port, path(endpoint), agent);
    if (status !== 201) throw new Error(`POST ${endpoint} answered ${status}`);
    latencies.push(performance.now() - started);
  }
  return latencies;
}

function post(port: number, target: string, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path: target, method: 'POST', agent }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** Sequential PINGs for `ms`: the Redis round trip that the target is counted in. */
export async function redisRoundTrips(url: string, ms: number): Promise<number[]> {
  const client = new Redis(url);
  try {
    await client.ping();
    const latencies: number[] = [];
    const until = performance.now() + ms;
    while (performance.now() < until) {
      const started = performance.now();
      await client.ping();
      latencies.push(performance.now() - started);
    }
    return latencies;
  } finally {
    await client.quit();
  }
}

/** What autocannon saw with `connections` concurrent connections, each request on a new item. */
export interface LoadResult {
  readonly requestsPerSecond: number;
  readonly non2xx: number;
  readonly errors: number;
}

export async function load(app: BenchApp, endpoint: Endpoint, connections: number, seconds: number) {
  const result = await autocannon({
    url: `http://127.0.0.1:${app.port}`,
    connections,
    duration: seconds,
    requests: [{ method: 'POST', setupRequest: (request) => ({ ...request, path: path(endpoint) }) }],
  });
  return {
    requestsPerSecond: result.requests.average,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  } satisfies LoadResult;
}
