// One instance of a shop whose purchases are @Idempotent(), locking on the Redis at REDIS_URL (or on the
// PostgreSQL at POSTGRES_URL when it is set) with a lock ttl of LOCK_TTL. Each run of the purchase pushes "<INSTANCE> run" to the Redis list LOG_KEY and prints "entered";
// with HANG=1 the purchase then never returns, so the test can SIGKILL the instance mid-handler. It prints
// "listening <url>" once it serves.
import 'reflect-metadata';
import { Body, Controller, Module, Param, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { Idempotent, LockModule } from '../../lib/index.js';

const { REDIS_URL, KEY_PREFIX, LOCK_TTL, INSTANCE, LOG_KEY, HANG } = process.env as Record<string, string>;
const { POSTGRES_URL } = process.env;

const log = new Redis(REDIS_URL);

@Controller('shop')
class CrashShopController {
  @Post(':productId/purchase')
  @Idempotent()
  async purchase(
    @Param('productId') productId: string,
    @Body() body: { quantity: number },
  ): Promise<{ orderId: string; productId: string; quantity: number; by: string }> {
    await log.rpush(LOG_KEY, `${INSTANCE} run`);
    console.log('entered');
    if (HANG === '1') await new Promise(() => undefined);
    return { orderId: randomUUID(), productId, quantity: body.quantity, by: INSTANCE };
  }
}

@Module({
  imports: [
    LockModule.forRoot({
      ...(POSTGRES_URL ? { postgres: POSTGRES_URL } : { redis: REDIS_URL }),
      keyPrefix: KEY_PREFIX,
      ttl: Number(LOCK_TTL),
    }),
  ],
  controllers: [CrashShopController],
})
class CrashShopModule {}

const app = await NestFactory.create(CrashShopModule, { logger: ['error', 'warn'] });
await app.listen(0, '127.0.0.1');
// the test process holds our stdin: when it goes away, so do we
process.stdin.on('end', () => process.exit(1));
process.stdin.resume();
console.log(`listening ${(await app.getUrl()).replace('[::1]', '127.0.0.1')}`);
