import { Module } from '@nestjs/common';
import { InventoryService } from '../inventory/inventory.service.js';
import { UnlockedInventoryController } from './unlocked-inventory.controller.js';
import { UnlockedReportJob } from './unlocked-report.job.js';

/**
 * What `LOCKS=off` runs, for the demo's comparison: the same stock code and report, with no lock at all.
 * We do not fake the lock (a store that always grants would still run the lock code and claim to lock);
 * the app is built without LockModule, and its purchase handler and report job are the locked ones minus
 * `@WithLock` (and `@Idempotent()`: a retried purchase runs every time it is sent). Transfers and the ledger are left out: the comparison needs neither. Never copy this.
 */
@Module({
  controllers: [UnlockedInventoryController],
  providers: [InventoryService, UnlockedReportJob],
})
export class UnlockedModule {}
