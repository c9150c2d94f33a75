// One instance of an app whose report job runs every second (or on CRON), for the cross-process cron test;
// its locks live in Redis, or in etcd when ETCD_HOSTS is set.
import 'reflect-metadata';
import { Inject, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import { Redis } from 'ioredis';
import { LockModule, WithLock } from '../../lib/index.js';

const { REDIS_URL, KEY_PREFIX, RUNS_KEY, INSTANCE, LOCKED, ETCD_HOSTS } = process.env as Record<string, string>;
/**
 * etcd keeps a lease at least a whole second (2 s on the test cluster): its job runs every 4 s, held 2 s. On Redis
 * the hold counts from a run's start, which cron lets be up to 250 ms late: 600 ms ends before the next tick.
 */
const CRON = ETCD_HOSTS ? '*/4 * * * * *' : '* * * * * *';
const HOLD = ETCD_HOSTS ? '2s' : '600ms';
const DATA = Symbol('DATA');

/** Records when a run began (ms since the epoch) and where. */
async function record(data: Redis): Promise<void> {
  await data.rpush(RUNS_KEY, `${Date.now()}:${INSTANCE}`);
}

@Injectable()
class LockedReport {
  constructor(@Inject(DATA) private readonly data: Redis) {}

  @Cron(CRON)
  @WithLock('report:every-second', { onContention: 'skip', holdAtLeast: HOLD })
  run(): Promise<void> {
    return record(this.data);
  }
}

@Injectable()
class UnlockedReport {
  constructor(@Inject(DATA) private readonly data: Redis) {}

  @Cron(CRON)
  run(): Promise<void> {
    return record(this.data);
  }
}

const data = new Redis(REDIS_URL);

@Module({
  imports: [
    ScheduleModule.forRoot(),
    LockModule.forRoot(
      ETCD_HOSTS
        ? { etcd: { hosts: ETCD_HOSTS.split(',') }, keyPrefix: KEY_PREFIX }
        : { redis: REDIS_URL, keyPrefix: KEY_PREFIX },
    ),
  ],
  providers: [{ provide: DATA, useValue: data }, LOCKED === '1' ? LockedReport : UnlockedReport],
})
class CronAppModule {}

const app = await NestFactory.createApplicationContext(CronAppModule, { logger: ['error', 'warn'] });
app.enableShutdownHooks();
// the test process holds our stdin: when it goes away, so do we
process.stdin.on('end', () => void app.close().then(() => process.exit(0)));
process.stdin.resume();
console.log('ready');
