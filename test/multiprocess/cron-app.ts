// One instance of an app whose report job runs every second, for the cross-process cron test.
import 'reflect-metadata';
import { Inject, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import { Redis } from 'ioredis';
import { LockModule, WithLock } from '../../lib/index.js';

const { REDIS_URL, KEY_PREFIX, RUNS_KEY, INSTANCE, LOCKED } = process.env as Record<string, string>;
const DATA = Symbol('DATA');

async function record(data: Redis): Promise<void> {
  await data.rpush(RUNS_KEY, `${Math.floor(Date.now() / 1000)}:${INSTANCE}`);
}

@Injectable()
class LockedReport {
  constructor(@Inject(DATA) private readonly data: Redis) {}

  @Cron('* * * * * *')
  @WithLock('report:every-second', { onContention: 'skip', holdAtLeast: '900ms' })
  run(): Promise<void> {
    return record(this.data);
  }
}

@Injectable()
class UnlockedReport {
  constructor(@Inject(DATA) private readonly data: Redis) {}

  @Cron('* * * * * *')
  run(): Promise<void> {
    return record(this.data);
  }
}

const data = new Redis(REDIS_URL);

@Module({
  imports: [ScheduleModule.forRoot(), LockModule.forRoot({ redis: REDIS_URL, keyPrefix: KEY_PREFIX })],
  providers: [{ provide: DATA, useValue: data }, LOCKED === '1' ? LockedReport : UnlockedReport],
})
class CronAppModule {}

const app = await NestFactory.createApplicationContext(CronAppModule, { logger: ['error', 'warn'] });
app.enableShutdownHooks();
// the test process holds our stdin: when it goes away, so do we
process.stdin.on('end', () => void app.close().then(() => process.exit(0)));
process.stdin.resume();
console.log('ready');
