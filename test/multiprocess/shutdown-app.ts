// One instance of an HTTP app whose purchases of one product queue on one lock, for the shutdown test.
// It prints "listening <url>" when it serves and "entered" each time a purchase starts its locked section;
// a purchase works for WORK_MS, or until its lease ends (it honours the lock's signal, as it should).
import 'reflect-metadata';
import { Controller, Module, Param, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockModule, LockService, WithLock } from '../../lib/index.js';

const { REDIS_URL, KEY_PREFIX, WORK_MS, DRAIN } = process.env as Record<string, string>;

@Controller('inventory')
class PurchaseController {
  constructor(private readonly locks: LockService) {}

  @Post(':productId/purchase')
  @WithLock('inventory:<productId>', { wait: '20s', ttl: '30s' })
  async purchase(@Param('productId') productId: string): Promise<{ bought: string }> {
    console.log('entered');
    const { signal } = this.locks.current()!;
    // a lease that ends stops the work with the reason it carries (a LockLostError: 503 LOCK_LOST)
    await sleep(Number(WORK_MS), undefined, { signal }).catch((error: unknown) => {
      throw signal.aborted ? signal.reason : error;
    });
    return { bought: productId };
  }
}

@Module({
  imports: [
    LockModule.forRoot({
      redis: REDIS_URL,
      keyPrefix: KEY_PREFIX,
      ...(DRAIN === undefined ? {} : { drainTimeout: DRAIN }),
    }),
  ],
  controllers: [PurchaseController],
})
class ShutdownAppModule {}

const app = await NestFactory.create(ShutdownAppModule, { logger: ['error', 'warn'] });
app.enableShutdownHooks();
await app.listen(0, '127.0.0.1');
// the test process holds our stdin: when it goes away, so do we
process.stdin.on('end', () => process.exit(1));
process.stdin.resume();
console.log(`listening ${(await app.getUrl()).replace('[::1]', '127.0.0.1')}`);
