import { Inject, Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { WithLock } from 'nestjs-lock';
import { SampleConfig } from '../config/sample-config.js';
import { STORAGE, type Storage } from '../storage/storage.js';
import { currentTick, REPORT_RUNS } from './report-runs.js';

/**
 * A scheduled report that every instance schedules and exactly one runs per tick. The first instance to
 * fire claims the tick and runs it; the others find the tick claimed and skip it (logged at debug, never an
 * error), however late their timers fire within the second. The run takes a millisecond: the `report` key is
 * free again at once, and the claim on the tick stands until just before the next one.
 */
@Injectable()
export class ReportJob {
  constructor(
    @Inject(STORAGE) private readonly storage: Storage,
    private readonly config: SampleConfig,
  ) {}

  // every second, so the demo sees ticks quickly; a real report runs every few minutes
  @Cron(CronExpression.EVERY_SECOND, { name: 'report' })
  @WithLock('report')
  async run(): Promise<void> {
    await this.storage.append(REPORT_RUNS, `${currentTick()}:${this.config.instanceId}`);
  }
}
