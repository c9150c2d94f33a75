import { Inject, Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { WithLock } from 'nestjs-lock';
import { SampleConfig } from '../config/sample-config.js';
import { STORAGE, type Storage } from '../storage/storage.js';
import { currentTick, REPORT_RUNS } from './report-runs.js';

/**
 * A scheduled report that every instance schedules and exactly one runs per tick. The first instance to
 * fire takes `report`; the others find it held and skip that tick (`onContention: 'skip'`, logged at debug,
 * never an error). The run takes a millisecond, so an instance whose clock or timer is a little late could
 * fire after it has released and run the tick again: `holdAtLeast` keeps the lease for 500 ms from the
 * start (a token-checked expiry, not a delete), longer than instances drift apart and shorter than the
 * schedule's period.
 */
@Injectable()
export class ReportJob {
  constructor(
    @Inject(STORAGE) private readonly storage: Storage,
    private readonly config: SampleConfig,
  ) {}

  // every second, so the demo sees ticks quickly; a real report runs every few minutes and holds for seconds
  @Cron(CronExpression.EVERY_SECOND, { name: 'report' })
  @WithLock('report', { onContention: 'skip', holdAtLeast: '500ms' })
  async run(): Promise<void> {
    await this.storage.append(REPORT_RUNS, `${currentTick()}:${this.config.instanceId}`);
  }
}
