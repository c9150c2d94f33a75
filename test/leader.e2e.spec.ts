import 'reflect-metadata';
import { Controller, Injectable, Module, Scope, type INestApplicationContext, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Leader,
  LockConfigurationError,
  LockModule,
  LockService,
  type Leadership,
  type LockLostError,
} from '../lib/index.js';
import { testRedisUrl, uniquePrefix } from './support/stores.js';

/** What every instance's relay saw, in the order it happened, shared by the apps of one test. */
const log: string[] = [];

@Injectable()
class OutboxRelay {
  static instance = 0;
  readonly id = `app${++OutboxRelay.instance}`;

  @Leader('outbox-relay', { ttl: '2s', backoff: '100ms' })
  async relay({ term, signal }: Leadership): Promise<void> {
    log.push(`${this.id} leads ${term}`);
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    log.push(`${this.id} stops: ${(signal.reason as LockLostError).reason}`);
  }
}

describe('@Leader in a Nest application', () => {
  const apps: INestApplicationContext[] = [];

  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    log.length = 0;
  });

  async function boot(
    keyPrefix: string,
    providers: Type[],
    controllers: Type[] = [],
  ): Promise<INestApplicationContext> {
    @Module({ imports: [LockModule.forRoot({ redis: testRedisUrl(), keyPrefix })], providers, controllers })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    apps.push(app);
    return app;
  }

  async function until(check: () => boolean, timeout = 10_000): Promise<void> {
    const deadline = performance.now() + timeout;
    while (!check()) {
      if (performance.now() > deadline) throw new Error(`condition not met within ${timeout} ms: ${log.join('; ')}`);
      await sleep(5);
    }
  }

  it('runs the method on one instance at a time; app.close() hands the leadership to another at once', async () => {
    const keyPrefix = uniquePrefix();
    const first = await boot(keyPrefix, [OutboxRelay]);
    await until(() => log.length === 1);
    const second = await boot(keyPrefix, [OutboxRelay]);
    await sleep(500);
    expect(log).toHaveLength(1);
    const [leaderId, , firstTerm] = log[0].split(' ');
    const leader = leaderId === first.get(OutboxRelay).id ? first : second;
    const follower = leader === first ? second : first;
    expect(leader.get(LockService).isLeader('outbox-relay')).toBe(true);
    expect(follower.get(LockService).isLeader('outbox-relay')).toBe(false);
    expect(await follower.get(LockService).inspectLeader('outbox-relay')).toMatchObject({
      led: true,
      term: Number(firstTerm),
      leader: { pid: process.pid },
    });

    const closedAt = performance.now();
    apps.splice(apps.indexOf(leader), 1);
    await leader.close();
    await until(() => log.length === 3);
    const handOver = performance.now() - closedAt;

    const followerId = follower.get(OutboxRelay).id;
    expect(log[1]).toBe(`${leaderId} stops: resigned`);
    expect(log[2]).toMatch(new RegExp(`^${followerId} leads \\d+$`));
    expect(Number(log[2].split(' ')[2])).toBeGreaterThan(Number(firstTerm));
    expect(handOver).toBeLessThan(1000);
  });

  it('refuses new locks from the start of app.close(), and drains leaders and holders within one drainTimeout', async () => {
    let aborted = 0;
    @Injectable()
    class SlowRelay {
      @Leader('slow-relay', { ttl: '2s' })
      async relay({ signal }: Leadership): Promise<void> {
        log.push('leads');
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        aborted = performance.now();
        // ignores its signal for longer than the drain: the shutdown may not wait for it twice
        await sleep(6000, undefined, { ref: false });
      }
    }
    @Module({
      imports: [LockModule.forRoot({ redis: testRedisUrl(), keyPrefix: uniquePrefix(), drainTimeout: '2s' })],
      providers: [SlowRelay],
    })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    await until(() => log.length === 1);
    const locks = app.get(LockService);

    const closedAt = performance.now();
    const closing = app.close();
    await until(() => aborted > 0);
    // a request served while the leader winds down would take a lock past the moment the deploy began
    await expect(locks.acquire('order:1')).rejects.toThrow(/shutting down/);
    await closing;
    const took = performance.now() - closedAt;
    expect(took).toBeGreaterThanOrEqual(1900);
    // the leader's drain and the holders' drain are one: twice the drain would be 4 s
    expect(took).toBeLessThan(3500);
  });

  it('refuses at bootstrap a @Leader method of a controller', async () => {
    @Controller()
    class StatusController {
      @Leader('status')
      poll(): void {}
    }
    await expect(boot(uniquePrefix(), [], [StatusController])).rejects.toThrow(
      new LockConfigurationError(
        '@Leader(StatusController.poll)',
        'status',
        "expected it on a provider's method: a controller's method answers requests; put it on a provider",
      ),
    );
  });

  it('refuses at bootstrap a @Leader method of a request-scoped provider', async () => {
    @Injectable({ scope: Scope.REQUEST })
    class PerRequest {
      @Leader('per-request')
      run(): void {}
    }
    await expect(boot(uniquePrefix(), [PerRequest])).rejects.toThrow(/no one instance to run it on/);
  });

  it('refuses at bootstrap one name given different options by two methods', async () => {
    @Injectable()
    class Warmer {
      @Leader('cache', { ttl: '5s' })
      warm(): void {}
    }
    @Injectable()
    class Evictor {
      @Leader('cache', { ttl: '10s' })
      evict(): void {}
    }
    await expect(boot(uniquePrefix(), [Warmer, Evictor])).rejects.toThrow(
      'Invalid nestjs-lock option "@Leader(Evictor.evict)": got the string "cache"; Warmer.warm leads this name with other options',
    );
  });

  it('runs every method of one name with the same term', async () => {
    const terms: Record<string, number> = {};
    @Injectable()
    class Warmer {
      @Leader('cache', { ttl: '5s' })
      warm({ term, signal }: Leadership) {
        terms.warm = term;
        return new Promise((resolve) => signal.addEventListener('abort', resolve));
      }
    }
    @Injectable()
    class Evictor {
      @Leader('cache', { ttl: '5s' })
      evict({ term, signal }: Leadership) {
        terms.evict = term;
        return new Promise((resolve) => signal.addEventListener('abort', resolve));
      }
    }
    await boot(uniquePrefix(), [Warmer, Evictor]);
    await until(() => Object.keys(terms).length === 2);
    expect(terms.warm).toBe(terms.evict);
  });

  it('keeps the term until every method of one name has returned when one of them throws', async () => {
    let fail = (): void => undefined;
    const failing = new Promise<void>((resolve) => (fail = resolve));
    @Injectable()
    class Flusher {
      @Leader('pair', { ttl: '5s', backoff: '10s' })
      async flush({ term, signal }: Leadership): Promise<void> {
        log.push(`flush starts ${term}`);
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        // a write still on its way when the term ends
        await sleep(300);
        log.push(`flush returns ${term}`);
      }
    }
    @Injectable()
    class Loader {
      @Leader('pair', { ttl: '5s', backoff: '10s' })
      async load({ term }: Leadership): Promise<never> {
        await failing;
        log.push(`load throws ${term}`);
        throw new Error('the cache is unreachable');
      }
    }
    const keyPrefix = uniquePrefix();
    await boot(keyPrefix, [Flusher, Loader]);
    await until(() => log.length === 1);
    await boot(keyPrefix, [Flusher, Loader]);
    fail();
    // the other instance, waiting, is elected once the first term's methods have all returned, not when one threw
    await until(() => log.length >= 5);
    const [firstTerm, secondTerm] = [...new Set(log.map((line) => Number(line.split(' ').at(-1))))];
    expect(log.slice(0, 5).sort()).toEqual(
      [
        `flush starts ${firstTerm}`,
        `load throws ${firstTerm}`,
        `flush returns ${firstTerm}`,
        `flush starts ${secondTerm}`,
        `load throws ${secondTerm}`,
      ].sort(),
    );
    expect(log.indexOf(`flush returns ${firstTerm}`)).toBeLessThan(log.indexOf(`flush starts ${secondTerm}`));
  });

  it('refuses a bad name or option when the class is declared, before any bootstrap', () => {
    expect(() => {
      class Bad {
        @Leader('')
        run(): void {}
      }
      return Bad;
    }).toThrow('"@Leader(Bad.run) name"');
    expect(() => {
      class Bad {
        @Leader('x', { ttl: '5 seconds' })
        run(): void {}
      }
      return Bad;
    }).toThrow('"@Leader(Bad.run).ttl"');
  });
});
