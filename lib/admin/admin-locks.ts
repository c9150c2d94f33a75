import { Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { LockService } from '../lock.service.js';
import { AdminStatistics, type TemplateStatistics } from './admin-statistics.js';

/**
 * The application's `LockService` as the admin routes use it, looked up once the application runs (so
 * `LockModule` need not be global), and the hold and wait times it reports from then on.
 */
@Injectable()
export class AdminLocks implements OnApplicationBootstrap, OnModuleDestroy {
  private locks?: LockService;
  private tally?: AdminStatistics;

  constructor(private readonly moduleRef: ModuleRef) {}

  /** Starts counting once every module is ready (`LockModule` may be set up after this one). */
  onApplicationBootstrap(): void {
    this.tally = new AdminStatistics(this.service());
  }

  /**
   * The application's lock service.
   * @throws Error naming what to import when the application has no `LockModule`
   */
  service(): LockService {
    if (this.locks) return this.locks;
    try {
      this.locks = this.moduleRef.get(LockService, { strict: false });
    } catch {
      throw new Error('LockAdminModule needs LockModule.forRoot(...) in the same application.');
    }
    return this.locks;
  }

  /** Hold and wait times per key template since the application started. */
  statistics(): TemplateStatistics[] {
    return this.tally?.snapshot() ?? [];
  }

  onModuleDestroy(): void {
    this.tally?.close();
  }
}
