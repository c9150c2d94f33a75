import { Module, type DynamicModule } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { LockModule } from 'nestjs-lock';
import { AccountsModule } from './accounts/accounts.module.js';
import { ConfigModule } from './config/config.module.js';
import type { SampleConfig } from './config/sample-config.js';
import { InventoryModule } from './inventory/inventory.module.js';
import { LedgerModule } from './ledger/ledger.module.js';
import { ReportModule } from './report/report.module.js';
import { StorageModule } from './storage/storage.module.js';
import { UnlockedModule } from './unlocked/unlocked.module.js';

/** The sample application, built from its configuration. */
@Module({})
export class AppModule {
  static register(config: SampleConfig): DynamicModule {
    const infrastructure = [ConfigModule.forRoot(config), StorageModule.forRoot(), ScheduleModule.forRoot()];
    if (!config.locks) return { module: AppModule, imports: [...infrastructure, UnlockedModule] };
    return {
      module: AppModule,
      imports: [
        ...infrastructure,
        // no Redis: locks live in this process only, which LockModule warns about at startup (an explicit
        // `redis: undefined` would be refused, as the sign of an unset variable)
        LockModule.forRoot({
          ...(config.redisUrl === undefined ? {} : { redis: config.redisUrl }),
          keyPrefix: `${config.keyPrefix}lock:`,
          isGlobal: true,
        }),
        InventoryModule,
        AccountsModule,
        ReportModule,
        LedgerModule,
      ],
    };
  }
}
