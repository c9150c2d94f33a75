import { jest } from '@jest/globals';
import { Controller, Get, Injectable, Logger, Module, SetMetadata, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { MessagePattern, Payload, ClientProxyFactory, Transport, type ClientProxy } from '@nestjs/microservices';
import { Cron, Interval, ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Redis } from 'ioredis';
import { firstValueFrom } from 'rxjs';
import {
  LockConfigurationError,
  LockLostError,
  LockModule,
  LockNotAcquiredError,
  LockNotReadyError,
  LockService,
  LockStoreError,
  WithLock,
  type Lock,
} from '../../lib/index.js';
import { freePort } from '../support/redis-server.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';

const CUSTOM = 'custom:meta';

@Controller('matrix')
class MatrixController {
  @Get('above/:id')
  @WithLock('matrix:<id>')
  above(): string {
    return 'above';
  }

  @WithLock('matrix:below')
  @Get('below')
  @SetMetadata(CUSTOM, 'kept')
  below(): string {
    return this.constructor.name;
  }
}

@Injectable()
class Jobs {
  runs: string[] = [];
  current?: Lock;

  @Cron('* * * * * *', { name: 'cron-above' })
  @WithLock('job:cron-above', { onContention: 'skip' })
  cronAbove(): void {
    this.runs.push('cron-above');
  }

  @WithLock('job:cron-below', { onContention: 'skip' })
  @Cron('* * * * * *', { name: 'cron-below' })
  cronBelow(): void {
    this.runs.push('cron-below');
  }

  @Interval('interval', 100)
  @WithLock('job:interval', { onContention: 'skip' })
  everyTenth(): void {
    this.runs.push('interval');
  }
}

@Injectable()
class Orders {
  constructor(readonly locks: LockService) {}

  @WithLock('order:<orderId>')
  async place(orderId: string, hold = 0): Promise<{ fence?: number; held: boolean; self: boolean }> {
    const lock = this.locks.current();
    if (hold) await new Promise((resolve) => setTimeout(resolve, hold));
    return { fence: lock?.fence, held: lock?.isHeld ?? false, self: this instanceof Orders };
  }

  @WithLock('order:<dto.orderId>', { fencing: true })
  async fenced(dto: { orderId: string }): Promise<number | undefined> {
    return this.locks.current(`order:${dto.orderId}`)?.fence;
  }

  @WithLock('order:<orderId>')
  async outer(orderId: string): Promise<string> {
    // a nested call for the key this flow already holds goes straight through
    return this.inner(orderId);
  }

  @WithLock('order:<orderId>')
  async inner(orderId: string): Promise<string> {
    return `inner ${orderId}`;
  }

  @WithLock('order:<0>', { onContention: 'skip' })
  async skipIfBusy(_orderId: string): Promise<string> {
    return 'ran';
  }

  @WithLock((first: string, second: string) => [`pair:${first}`, `pair:${second}`])
  async pair(first: string, second: string): Promise<string[]> {
    return [first, second];
  }

  @WithLock('order:<orderId>', { ttl: 300 })
  async untilLost(orderId: string, lost: (error: unknown) => void): Promise<void> {
    const signal = this.locks.current()!.signal;
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
    lost(signal.reason);
  }

  @WithLock('order:<orderId>', { holdAtLeast: '1500ms' })
  async quick(orderId: string): Promise<string> {
    return orderId;
  }
}

@Controller()
class OrderMessages {
  @MessagePattern('reserve')
  @WithLock('order:<payload.orderId>')
  reserve(@Payload() payload: { orderId: string }): string {
    return `reserved ${payload.orderId}`;
  }
}

describe('@WithLock', () => {
  let app: INestApplication;
  let keyPrefix: string;
  let admin: Redis;

  beforeAll(async () => {
    keyPrefix = uniquePrefix();
    admin = new Redis(testRedisUrl());
    const ref = await Test.createTestingModule({
      imports: [ScheduleModule.forRoot(), LockModule.forRoot({ redis: testRedisUrl(), keyPrefix })],
      controllers: [MatrixController, OrderMessages],
      providers: [Jobs, Orders],
    }).compile();
    app = ref.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(async () => {
    await app.close();
    await admin.quit();
  });

  it('keeps route, cron and custom metadata, the method name and `this`, in either decorator order', () => {
    const matrix = MatrixController.prototype;
    const jobs = Jobs.prototype;
    expect(Reflect.getMetadata('path', matrix.above)).toBe('above/:id');
    expect(Reflect.getMetadata('path', matrix.below)).toBe('below');
    expect(Reflect.getMetadata(CUSTOM, matrix.below)).toBe('kept');
    expect(Reflect.getMetadata('SCHEDULE_CRON_OPTIONS', jobs.cronAbove)).toMatchObject({ cronTime: '* * * * * *' });
    expect(Reflect.getMetadata('SCHEDULE_CRON_OPTIONS', jobs.cronBelow)).toMatchObject({ cronTime: '* * * * * *' });
    expect([matrix.above.name, matrix.below.name, jobs.cronAbove.name, jobs.cronBelow.name]).toEqual([
      'above',
      'below',
      'cronAbove',
      'cronBelow',
    ]);
    const registry = app.get(SchedulerRegistry);
    expect(registry.getCronJobs().has('cron-above')).toBe(true);
    expect(registry.getCronJobs().has('cron-below')).toBe(true);
  });

  it('runs @Cron and @Interval jobs registered in either order', async () => {
    const jobs = app.get(Jobs);
    const deadline = Date.now() + 3500;
    while (Date.now() < deadline && !['cron-above', 'cron-below', 'interval'].every((r) => jobs.runs.includes(r))) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(new Set(jobs.runs)).toEqual(new Set(['cron-above', 'cron-below', 'interval']));
  });

  it('locks a provider method called directly, resolving <name> and <dto.path> from its arguments', async () => {
    const orders = app.get(Orders);
    const result = await orders.place('o-1');
    expect(result).toEqual({ fence: undefined, held: true, self: true });
    expect(await admin.exists(`${keyPrefix}{order:o-1}`)).toBe(0);
    const first = await orders.fenced({ orderId: 'o-2' });
    const second = await orders.fenced({ orderId: 'o-2' });
    expect(second).toBeGreaterThan(first as number);
  });

  it('throws LockNotAcquiredError to a direct caller while another call holds the key, or skips per policy', async () => {
    const orders = app.get(Orders);
    const running = orders.place('o-3', 300);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await expect(orders.place('o-3')).rejects.toBeInstanceOf(LockNotAcquiredError);
    await running;
    const holder = await app.get(LockService).acquire('order:o-4');
    expect(await orders.skipIfBusy('o-4')).toBeUndefined();
    await holder.release();
    expect(await orders.skipIfBusy('o-4')).toBe('ran');
  });

  it('lets a nested decorated call for a key the flow already holds through, instead of deadlocking', async () => {
    await expect(app.get(Orders).outer('o-5')).resolves.toBe('inner o-5');
  });

  it('takes the keys a key function returns', async () => {
    await expect(app.get(Orders).pair('a', 'b')).resolves.toEqual(['a', 'b']);
  });

  it('aborts the handler signal with LockLostError and logs a warning when its lease is deleted mid-run', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const unhandled = jest.fn();
    process.on('unhandledRejection', unhandled);
    try {
      let lost: unknown;
      const running = app.get(Orders).untilLost('o-6', (error) => (lost = error));
      let deleted = 0;
      for (let i = 0; i < 50 && deleted === 0; i++) {
        deleted = await admin.del(`${keyPrefix}{order:o-6}`);
        if (!deleted) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(deleted).toBe(1);
      await running;
      expect(lost).toBeInstanceOf(LockLostError);
      expect((lost as LockLostError).reason).toBe('taken');
      // by its template: the resolved key is in no log line unless exposeResolvedKeys
      const lines = warn.mock.calls.map(([message]) => String(message));
      expect(lines.some((line) => line.startsWith('Lock "order:<orderId>" was lost'))).toBe(true);
      expect(lines.join('\n')).not.toContain('o-6');
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
      warn.mockRestore();
    }
  });

  it('keeps the key for holdAtLeast after a quick run, by expiry rather than delete', async () => {
    await app.get(Orders).quick('o-7');
    const ttl = await admin.pttl(`${keyPrefix}{order:o-7}`);
    expect(ttl).toBeGreaterThan(1000);
    expect(ttl).toBeLessThanOrEqual(1500);
    await expect(app.get(Orders).quick('o-7')).rejects.toBeInstanceOf(LockNotAcquiredError);
  });

  it('locks microservice message handlers, resolving the key from the payload', async () => {
    const port = await freePort();
    const ref = await Test.createTestingModule({
      imports: [LockModule.forRoot({ redis: testRedisUrl(), keyPrefix })],
      controllers: [OrderMessages],
    }).compile();
    const micro = ref.createNestMicroservice({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
      logger: false,
    });
    await micro.listen();
    const client: ClientProxy = ClientProxyFactory.create({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
    });
    try {
      await expect(firstValueFrom(client.send('reserve', { orderId: 'm-1' }))).resolves.toBe('reserved m-1');
    } finally {
      await client.close();
      await micro.close();
    }
  });
});

describe('@WithLock misuse', () => {
  it('rejects a call made before any LockModule is ready with an error that says what to do', async () => {
    class Lonely {
      @WithLock('lonely')
      async run(): Promise<string> {
        return 'ran';
      }
    }
    const error = await new Lonely().run().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockNotReadyError);
    expect((error as Error).message).toMatch(/Lonely\.run.*LockModule\.forRoot\(\).*app\.init\(\)/s);
  });

  it('refuses a call that comes while its application shuts down with LockStoreError (HTTP 503), not LockNotReadyError', async () => {
    @Injectable()
    class Closing {
      @WithLock('closing')
      async run(): Promise<string> {
        return 'ran';
      }
    }
    @Module({ imports: [LockModule.forRoot({})], providers: [Closing] })
    class ClosingModule {}
    const app = await NestFactory.createApplicationContext(ClosingModule, { logger: false });
    const job = app.get(Closing);
    expect(await job.run()).toBe('ran');
    await app.close();
    const error = await job.run().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(/shutting down/);
  });

  it('refuses a method decorated twice', () => {
    expect(() => {
      class Twice {
        @WithLock('a')
        @WithLock('b')
        run(): void {}
      }
      return Twice;
    }).toThrow(LockConfigurationError);
  });

  it.each([
    ['an empty template', ''],
    ['an unbalanced placeholder', 'a:<id'],
    ['an empty placeholder', 'a:<>'],
    ['two placeholders with nothing between them', 'pair:<a><b>'],
  ])('refuses %s when the class loads, naming the method', (_name, key) => {
    expect(() => {
      class Bad {
        @WithLock(key)
        run(): void {}
      }
      return Bad;
    }).toThrow(/@WithLock\(Bad\.run\) key/);
  });

  it('refuses bad options when the class loads, naming the method and option', () => {
    expect(() => {
      class BadTtl {
        @WithLock('k', { ttl: -5 })
        run(): void {}
      }
      return BadTtl;
    }).toThrow(/BadTtl\.run.*ttl/);
  });

  it('fails the bootstrap for a ttl the store cannot honour, not each call', async () => {
    @Injectable()
    class Hurried {
      @WithLock('report:daily', { ttl: 100 })
      async run(): Promise<void> {}
    }
    // the hand-off window must fit twice in every ttl
    const module = LockModule.forRoot({ redis: testRedisUrl(), keyPrefix: uniquePrefix(), handoffWindow: 80 });
    const ref = await Test.createTestingModule({ imports: [module], providers: [Hurried] }).compile();
    const app = ref.createNestApplication({ logger: false });
    const error = await app.init().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect((error as LockConfigurationError).option).toBe('@WithLock(Hurried.run).ttl');
    await app.close();
  });

  it('fails the bootstrap when a placeholder of a provider method matches no parameter', async () => {
    @Injectable()
    class Typo {
      @WithLock('report:<dayy>')
      run(day: string): string {
        return day;
      }
    }
    const ref = await Test.createTestingModule({ imports: [LockModule.forRoot()], providers: [Typo] }).compile();
    const app = ref.createNestApplication({ logger: false });
    const error = await app.init().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect((error as Error).message).toMatch(/<dayy>.*Typo\.run\(day\)/);
    await app.close();
  });
});
