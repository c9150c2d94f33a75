// An application of the package's users, compiled by scripts/package-check.sh against the packed tarball
// with `skipLibCheck: false` and only the required peers installed (as app.mts and as app.cts): the
// typings must compile without any optional peer.
import { Controller, Injectable, Module, Param, Post } from '@nestjs/common';
import {
  LOCK_METRICS,
  LockManager,
  LockModule,
  LockNotAcquiredError,
  LockService,
  LockTelemetry,
  MemoryLockStore,
  WithLock,
  type Lock,
  type LockModuleOptions,
} from 'nestjs-lock';

@Injectable()
export class Ledger {
  constructor(private readonly locks: LockService) {}

  transfer(from: string, to: string): Promise<number> {
    return this.locks.using([`account:${from}`, `account:${to}`], (held: Lock[]) => held.length, { ttl: '5s' });
  }
}

@Controller('inventory')
export class InventoryController {
  @Post(':productId/purchase')
  @WithLock('inventory:<productId>', { wait: '1s' })
  async purchase(@Param('productId') productId: string): Promise<string> {
    return productId;
  }
}

const fromEnvironment = (): LockModuleOptions =>
  process.env.REDIS_URL === undefined ? { store: new MemoryLockStore() } : { redis: process.env.REDIS_URL };

@Module({
  imports: [LockModule.forRootAsync({ useFactory: fromEnvironment })],
  controllers: [InventoryController],
  providers: [Ledger],
})
export class AppModule {}

export async function lockDirectly(): Promise<string> {
  const manager = new LockManager({ store: new MemoryLockStore() });
  const telemetry = await LockTelemetry.attach(manager);
  try {
    return await manager.using('report:daily', (lock) => `${lock.key} ${LOCK_METRICS.acquisitions}`);
  } catch (error) {
    if (error instanceof LockNotAcquiredError) return error.code;
    throw error;
  } finally {
    telemetry?.detach();
    await manager.close();
  }
}
