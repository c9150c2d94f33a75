import { Inject, Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { SampleConfig } from '../config/sample-config.js';
import { currentTick, REPORT_RUNS } from '../report/report-runs.js';
import { STORAGE, type Storage } from '../storage/storage.js';

/** The demo's comparison run only: {@link ReportJob} without `@WithLock`, so every instance runs every tick. */
@Injectable()
export class UnlockedReportJob {
  constructor(
    @Inject(STORAGE) private readonly storage: Storage,
    private readonly config: SampleConfig,
  ) {}

  @Cron(CronExpression.EVERY_SECOND, { name: 'report' })
  async run(): Promise<void> {
    await this.storage.append(REPORT_RUNS, `${currentTick()}:${this.config.instanceId}`);
  }
}
