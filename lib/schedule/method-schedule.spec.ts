import { Cron, Interval, Timeout } from '@nestjs/schedule';
import { scheduleOf } from './method-schedule.js';

class Jobs {
  @Cron('0 */5 * * * *', { name: 'report', timeZone: 'Europe/Paris' })
  report(): void {}

  @Interval('poll', 1500)
  poll(): void {}

  @Timeout(100)
  warmUp(): void {}

  plain(): void {}
}

describe('scheduleOf', () => {
  it("reads a @Cron method's expression, name and time zone", () => {
    expect(scheduleOf(Jobs.prototype.report)).toEqual({
      kind: 'cron',
      cronTime: '0 */5 * * * *',
      name: 'report',
      timeZone: 'Europe/Paris',
    });
  });

  it("reads an @Interval method's period and marks a @Timeout method as one run", () => {
    expect(scheduleOf(Jobs.prototype.poll)).toEqual({ kind: 'interval', period: 1500 });
    expect(scheduleOf(Jobs.prototype.warmUp)).toEqual({ kind: 'timeout' });
  });

  it('finds no schedule on a method that has none', () => {
    expect(scheduleOf(Jobs.prototype.plain)).toBeUndefined();
  });
});
