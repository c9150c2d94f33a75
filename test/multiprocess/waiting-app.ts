// An HTTP app whose requests wait for a key held elsewhere, for shutdown-lines.spec.ts. POST /stock/:id/count
// takes `stock:<id>` as a mutex, POST /stock/:id/read as a permit of a semaphore of limit 1, each waiting up to
// 20 s. It prints "listening <url>" when it serves, and "contended" each time a request is refused and waits.
import 'reflect-metadata';
import { Controller, Module, Param, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LockModule, LockService, WithLock } from '../../lib/index.js';

const { REDIS_URL, KEY_PREFIX } = process.env as Record<string, string>;

@Controller('stock')
class StockController {
  @Post(':id/count')
  @WithLock('stock:<id>', { wait: '20s' })
  count(@Param('id') id: string): { counted: string } {
    return { counted: id };
  }

  @Post(':id/read')
  @WithLock('stock:<id>', { limit: 1, wait: '20s' })
  read(@Param('id') id: string): { read: string } {
    return { read: id };
  }
}

@Module({
  imports: [LockModule.forRoot({ redis: REDIS_URL, keyPrefix: KEY_PREFIX })],
  controllers: [StockController],
})
class WaitingAppModule {}

const app = await NestFactory.create(WaitingAppModule, { logger: ['error', 'warn'] });
app.enableShutdownHooks();
app.get(LockService).on('contended', () => console.log('contended'));
await app.listen(0, '127.0.0.1');
// the test process holds our stdin: when it goes away, so do we
process.stdin.on('end', () => process.exit(1));
process.stdin.resume();
console.log(`listening ${(await app.getUrl()).replace('[::1]', '127.0.0.1')}`);
