// One instance of an app whose scheduled job outlasts the shutdown's drain, for the shutdown test. The job
// prints "job entered" as its locked section starts and works until its lock's signal aborts, checking it
// every 10 ms, then prints "job stopped" and returns: it honours the signal, as the docs ask.
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockModule, LockService, WithLock } from '../../lib/index.js';

const { REDIS_URL, KEY_PREFIX, DRAIN } = process.env as Record<string, string>;

@Injectable()
class SlowJob {
  constructor(private readonly locks: LockService) {}

  @Cron('* * * * * *')
  @WithLock('job:slow', { onContention: 'skip', ttl: '30s' })
  async run(): Promise<void> {
    console.log('job entered');
    const { signal } = this.locks.current()!;
    while (!signal.aborted) await sleep(10);
    console.log('job stopped');
  }
}

@Module({
  imports: [
    ScheduleModule.forRoot(),
    LockModule.forRoot({ redis: REDIS_URL, keyPrefix: KEY_PREFIX, drainTimeout: DRAIN }),
  ],
  providers: [SlowJob],
})
class JobShutdownAppModule {}

const app = await NestFactory.createApplicationContext(JobShutdownAppModule, { logger: ['error', 'warn'] });
app.enableShutdownHooks();
// the test process holds our stdin: when it goes away, so do we
process.stdin.on('end', () => process.exit(1));
process.stdin.resume();
console.log('ready');
