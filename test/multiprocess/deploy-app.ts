// One instance of an HTTP app in a rolling deploy: purchases of one product queue on one lock with the
// module's defaults (ttl 30 s, drain 5 s), and each works for WORK_MS without looking at its signal, as much
// real code does. Each section writes "<INSTANCE> enter" and "<INSTANCE> leave" (with the time) to the Redis
// list LOG_KEY, so the order in which instances held the lock is read from one place. It prints
// "listening <url>" when it serves and "entered" when a section starts.
import 'reflect-metadata';
import { Controller, Module, Param, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockModule, WithLock } from '../../lib/index.js';

const { REDIS_URL, KEY_PREFIX, WORK_MS, INSTANCE, LOG_KEY } = process.env as Record<string, string>;

// not the module's client: the log must outlive the module's shutdown
const log = new Redis(REDIS_URL);

@Controller('inventory')
class PurchaseController {
  @Post(':productId/purchase')
  @WithLock('inventory:<productId>', { wait: '30s' })
  async purchase(@Param('productId') productId: string): Promise<{ bought: string; by: string }> {
    await log.rpush(LOG_KEY, `${INSTANCE} enter ${Date.now()}`);
    console.log('entered');
    await sleep(Number(WORK_MS));
    await log.rpush(LOG_KEY, `${INSTANCE} leave ${Date.now()}`);
    return { bought: productId, by: INSTANCE };
  }
}

@Module({
  imports: [LockModule.forRoot({ redis: REDIS_URL, keyPrefix: KEY_PREFIX })],
  controllers: [PurchaseController],
})
class DeployAppModule {}

const app = await NestFactory.create(DeployAppModule, { logger: ['error', 'warn'] });
app.enableShutdownHooks();
await app.listen(0, '127.0.0.1');
// the test process holds our stdin: when it goes away, so do we
process.stdin.on('end', () => process.exit(1));
process.stdin.resume();
console.log(`listening ${(await app.getUrl()).replace('[::1]', '127.0.0.1')}`);
