// One instance of an app with two jobs that run every EVERY seconds (default 1), one on @Cron and one on
// @Interval (JOBS picks them: 'cron', 'interval', or both by default), each guarded by @WithLock with no
// holdAtLeast, for the once-per-tick tests; its locks live in Redis, in etcd when ETCD_HOSTS is set, or in PostgreSQL when POSTGRES_URL is. Its
// timers can fire late: DELAY_MS before the locked call (a slow decorator in front of it), or BUSY_MS of a
// blocked event loop just before each second.
import 'reflect-metadata';
import { Inject, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cron, Interval, ScheduleModule } from '@nestjs/schedule';
import { Redis } from 'ioredis';
import { LockModule, WithLock } from '../../lib/index.js';

const {
  REDIS_URL,
  KEY_PREFIX,
  RUNS_KEY,
  INSTANCE,
  ETCD_HOSTS,
  POSTGRES_URL,
  JOBS = 'cron,interval',
} = process.env as Record<string, string>;
const EVERY = Number(process.env.EVERY ?? 1);
const DELAY_MS = Number(process.env.DELAY_MS ?? 0);
const BUSY_MS = Number(process.env.BUSY_MS ?? 0);
const START_AFTER_MS = Number(process.env.START_AFTER_MS ?? 0);
const DATA = Symbol('DATA');

/** Waits `ms` before calling the method, as a slow decorator in front of the lock would; copies its metadata. */
function DelayedBy(ms: number): MethodDecorator {
  return (_target, _key, descriptor) => {
    const inner = descriptor.value as unknown as (...args: unknown[]) => Promise<unknown>;
    const outer = async function (this: Report, ...args: unknown[]): Promise<unknown> {
      if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
      return inner.apply(this, args);
    };
    for (const key of Reflect.getOwnMetadataKeys(inner)) {
      Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, inner), outer);
    }
    descriptor.value = outer as never;
    return descriptor;
  };
}

/** A job of this app, which records its runs in Redis. */
abstract class Report {
  constructor(
    private readonly data: Redis,
    private readonly schedule: string,
  ) {}

  /** Records a run: when the method started (what its claim counts from), and where. */
  protected async record(): Promise<void> {
    await this.data.rpush(`${RUNS_KEY}:${this.schedule}`, `${Date.now()}:${INSTANCE}`);
  }
}

@Injectable()
class CronReport extends Report {
  constructor(@Inject(DATA) data: Redis) {
    super(data, 'cron');
  }

  @Cron(`*/${EVERY} * * * * *`)
  @DelayedBy(DELAY_MS)
  @WithLock('report:cron', { onContention: 'skip' })
  run(): Promise<void> {
    return this.record();
  }
}

@Injectable()
class IntervalReport extends Report {
  constructor(@Inject(DATA) data: Redis) {
    super(data, 'interval');
  }

  @Interval(EVERY * 1000)
  @DelayedBy(DELAY_MS)
  @WithLock('report:interval', { onContention: 'skip' })
  run(): Promise<void> {
    return this.record();
  }
}

/** Blocks the event loop for `ms` from 20 ms before each second, so timers due then fire late. */
function blockBeforeEachSecond(ms: number): void {
  const next = (): void => {
    const timer = setTimeout(
      () => {
        const until = Date.now() + ms;
        while (Date.now() < until);
        next();
      },
      1000 - ((Date.now() + 20) % 1000),
    );
    timer.unref();
  };
  next();
}

const data = new Redis(REDIS_URL);

@Module({
  imports: [
    ScheduleModule.forRoot(),
    LockModule.forRoot(
      ETCD_HOSTS
        ? { etcd: { hosts: ETCD_HOSTS.split(',') }, keyPrefix: KEY_PREFIX }
        : POSTGRES_URL
          ? { postgres: POSTGRES_URL, keyPrefix: KEY_PREFIX }
          : { redis: REDIS_URL, keyPrefix: KEY_PREFIX },
    ),
  ],
  providers: [
    { provide: DATA, useValue: data },
    ...(JOBS.includes('cron') ? [CronReport] : []),
    ...(JOBS.includes('interval') ? [IntervalReport] : []),
  ],
})
class TickAppModule {}

// instances whose intervals start at different moments of the second
await new Promise((resolve) => setTimeout(resolve, START_AFTER_MS));
const app = await NestFactory.createApplicationContext(TickAppModule, { logger: ['error', 'warn'] });
app.enableShutdownHooks();
if (BUSY_MS > 0) blockBeforeEachSecond(BUSY_MS);
// the test process holds our stdin: when it goes away, so do we
process.stdin.on('end', () => void app.close().then(() => process.exit(0)));
process.stdin.resume();
console.log('ready');
