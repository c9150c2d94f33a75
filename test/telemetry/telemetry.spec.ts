import { jest } from '@jest/globals';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  LOCK_METRICS,
  LockManager,
  LockModule,
  LockService,
  LockStoreError,
  LockTelemetry,
  MemoryLockStore,
  WithLock,
  type LockModuleOptions,
} from '../../lib/index.js';
import type { AcquireRequest, AcquireResult } from '../../lib/store.js';
import { epochMs, installOpenTelemetrySdk } from '../support/opentelemetry-sdk.js';

/**
 * A memory store that fails the next `failAcquires` acquires as a dropped connection would, and answers the
 * next `lateAcquires` only once their lease is over, as a store too slow for the TTL would.
 */
class FlakyStore extends MemoryLockStore {
  failAcquires = 0;
  lateAcquires = 0;

  override async acquire(request: AcquireRequest): Promise<AcquireResult> {
    if (this.failAcquires > 0) {
      this.failAcquires--;
      throw new LockStoreError('acquire', request.key, new Error('ECONNRESET'));
    }
    const result = await super.acquire(request);
    if (this.lateAcquires > 0) {
      this.lateAcquires--;
      await sleep(request.ttl);
    }
    return result;
  }
}

@Injectable()
class Inventory {
  @WithLock('inventory:<productId>', { wait: '2s', retry: { minDelay: 10, maxDelay: 20 } })
  /** Holds the product for `hold` ms, or until `hold` settles; calls `entered` as its section begins. */
  async reserve(productId: string, hold: number | Promise<void> = 0, entered?: () => void): Promise<string> {
    entered?.();
    await (typeof hold === 'number' ? sleep(hold) : hold);
    return productId;
  }

  @WithLock('report:<day>', { onContention: 'skip' })
  async report(day: string): Promise<string> {
    return day;
  }
}

const INVENTORY = { 'lock.key_template': 'inventory:<productId>', 'lock.store': 'FlakyStore' };
const DIRECT = { 'lock.key_template': 'direct', 'lock.store': 'FlakyStore' };

describe('OpenTelemetry metrics and spans', () => {
  let otel: ReturnType<typeof installOpenTelemetrySdk>;
  let app: INestApplication | undefined;
  let store: FlakyStore;

  async function start(options: Partial<LockModuleOptions> = {}) {
    store = new FlakyStore();
    @Module({ imports: [LockModule.forRoot({ store, ...options })], providers: [Inventory] })
    class AppModule {}
    const ref = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = ref.createNestApplication({ logger: false });
    await app.init();
    return { locks: app.get(LockService), inventory: app.get(Inventory) };
  }

  beforeEach(() => {
    otel = installOpenTelemetrySdk();
  });

  afterEach(async () => {
    await app?.close();
    app = undefined;
    await otel.uninstall();
    // the SDK warns of misuse (an operation on an ended span, a conflicting instrument) through diag
    expect(otel.diagnostics).toEqual([]);
  });

  it('holds the expected counts in every counter and histogram after a scripted run', async () => {
    const { locks, inventory } = await start();

    // 3 quick reservations, then 2 reservations of one product: the second, asked once the first is inside its
    // 200 ms section, waits for it
    for (const id of ['1', '2', '3']) await inventory.reserve(id);
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const holding = inventory.reserve('9', 200, entered);
    await inside;
    await Promise.all([holding, inventory.reserve('9')]);

    // a direct holder with a metricKey; tryAcquire meets it; one manual extend
    const busy = await locks.acquire('busy:1', { metricKey: 'busy:<id>' });
    expect(await locks.tryAcquire('busy:1', { metricKey: 'busy:<id>' })).toBeNull();
    await busy.extend();
    await busy.release();

    // a skipped cron-style run, a lost lease, a renewed lease, a store failure
    const report = await locks.acquire('report:mon', { metricKey: 'report:<day>' });
    expect(await inventory.report('mon')).toBeUndefined();
    await report.release();
    const doomed = await locks.acquire('doomed', { ttl: 300, autoRenew: true });
    await store.release('doomed', doomed.token);
    await new Promise((resolve) => doomed.signal.addEventListener('abort', resolve));
    await locks.using('long', () => sleep(700), { ttl: 300 });
    store.failAcquires = 1;
    const storeError = await locks.acquire('unlucky').catch((error: unknown) => error);
    expect(storeError).toBeInstanceOf(LockStoreError);

    const meters = await otel.collectMetrics();
    const tracer = await otel.collectSpans();
    // 5 inventory + busy + report + doomed + long
    expect(meters.sum(LOCK_METRICS.acquisitions)).toBe(9);
    expect(meters.sum(LOCK_METRICS.acquisitions, INVENTORY)).toBe(5);
    expect(meters.sum(LOCK_METRICS.acquisitions, { 'lock.key_template': 'busy:<id>' })).toBe(1);
    expect(meters.sum(LOCK_METRICS.acquisitions, DIRECT)).toBe(2);

    // the waiting reservation, tryAcquire, the skipped report
    expect(meters.sum(LOCK_METRICS.contentions)).toBe(3);
    expect(meters.sum(LOCK_METRICS.contentions, INVENTORY)).toBe(1);
    expect(meters.sum(LOCK_METRICS.skipped, { 'lock.key_template': 'report:<day>' })).toBe(1);

    expect(meters.histogram(LOCK_METRICS.waitDuration, { 'lock.acquired': true }).count).toBe(9);
    expect(meters.histogram(LOCK_METRICS.waitDuration, { 'lock.acquired': false }).count).toBe(2);
    const waits = meters.histogram(LOCK_METRICS.waitDuration, INVENTORY);
    expect(waits.max).toBeGreaterThan(0.15);
    expect(waits.max).toBeLessThan(2);

    expect(meters.histogram(LOCK_METRICS.holdDuration, { 'lock.outcome': 'released' }).count).toBe(8);
    expect(meters.histogram(LOCK_METRICS.holdDuration, { 'lock.outcome': 'lost' }).count).toBe(1);
    expect(meters.histogram(LOCK_METRICS.holdDuration, DIRECT).max).toBeGreaterThanOrEqual(0.69);

    expect(meters.sum(LOCK_METRICS.lost)).toBe(1);
    expect(meters.sum(LOCK_METRICS.lost, { ...DIRECT, 'lock.lost.reason': 'taken' })).toBe(1);
    expect(meters.sum(LOCK_METRICS.renewals, { 'lock.renewal': 'manual' })).toBe(1);
    expect(meters.sum(LOCK_METRICS.renewals, { 'lock.renewal': 'auto' })).toBeGreaterThanOrEqual(2);
    expect(meters.sum(LOCK_METRICS.storeErrors)).toBe(1);
    expect(meters.sum(LOCK_METRICS.storeErrors, { 'lock.operation': 'acquire', 'lock.store': 'FlakyStore' })).toBe(1);

    // spans: one acquire span per acquisition (granted, given up, failed), one hold span per lease
    expect(tracer.ended('lock.acquire')).toHaveLength(9 + 2 + 1);
    expect(tracer.ended('lock.hold')).toHaveLength(9);
    expect(tracer.started.filter((span) => !span.ended)).toEqual([]);
    const lostHold = tracer.ended('lock.hold').find((span) => span.attributes['lock.outcome'] === 'lost')!;
    expect(lostHold.status.code).toBe(SpanStatusCode.ERROR);
    expect(lostHold.attributes['lock.lost.reason']).toBe('taken');
    const failed = tracer.ended('lock.acquire').find((span) => span.status.code === SpanStatusCode.ERROR)!;
    // recordException keeps the error as an `exception` event: its type is the error's code, else its name
    expect(failed.events).toEqual([
      expect.objectContaining({
        name: 'exception',
        attributes: {
          'exception.type': 'LOCK_STORE_ERROR',
          // the key quoted in the message and stack is replaced by its template, as in every attribute
          'exception.message': (storeError as LockStoreError).message.replace('"unlucky"', '"direct"'),
          'exception.stacktrace': (storeError as LockStoreError).stack!.replace('"unlucky"', '"direct"'),
        },
      }),
    ]);

    // bounded attributes: never the resolved key, never a token
    const everything = JSON.stringify([
      ...meters.allAttributes(),
      ...tracer.started.map((span) => [span.attributes, span.status, span.events]),
    ]);
    expect(everything).not.toContain('lock.key"');
    expect(everything).not.toMatch(/inventory:9|busy:1|report:mon|doomed|unlucky/);
    expect(everything).not.toContain(busy.token);
  });

  it('counts a grant that came back after its validity in lock.late_grants, and the call it failed as a store error', async () => {
    const { locks } = await start();
    store.lateAcquires = 2;
    await expect(locks.acquire('late', { ttl: 100, metricKey: 'late:<id>' })).rejects.toBeInstanceOf(LockStoreError);
    // the next try within the wait is on time
    await (await locks.acquire('late', { ttl: 100, wait: 5000, metricKey: 'late:<id>' })).release();

    const meters = await otel.collectMetrics();
    const attributes = { 'lock.key_template': 'late:<id>', 'lock.store': 'FlakyStore' };
    expect(meters.sum(LOCK_METRICS.lateGrants, attributes)).toBe(2);
    expect(meters.sum(LOCK_METRICS.storeErrors, { 'lock.operation': 'acquire' })).toBe(1);
    // a late grant is never a lease: one hold, released
    expect(meters.sum(LOCK_METRICS.acquisitions, attributes)).toBe(1);
    expect(meters.histogram(LOCK_METRICS.holdDuration, { 'lock.outcome': 'released' }).count).toBe(1);
  });

  it('measures the wait of a waiter in its acquire span and histogram, and nests both spans under the caller span', async () => {
    const { inventory } = await start();
    const tracerApi = trace.getTracer('test');
    const request = await tracerApi.startActiveSpan('POST /inventory/7', async (span) => {
      // the waiter asks once the holder is inside its 150 ms section
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      const holding = inventory.reserve('7', 150, entered);
      await inside;
      await Promise.all([holding, inventory.reserve('7')]);
      span.end();
      return span.spanContext();
    });
    const spans = await otel.collectSpans();
    const acquires = spans.ended('lock.acquire');
    const holds = spans.ended('lock.hold');
    expect(acquires).toHaveLength(2);
    expect(holds).toHaveLength(2);
    for (const span of [...acquires, ...holds]) {
      expect(span.parentSpanContext?.spanId).toBe(request.spanId);
      expect(span.spanContext().traceId).toBe(request.traceId);
      expect(span.attributes).toMatchObject({ ...INVENTORY, 'lock.label': 'Inventory.reserve' });
    }
    const duration = (span: ReadableSpan) => epochMs(span.endTime) - epochMs(span.startTime);
    const waiter = acquires.reduce((a, b) => (duration(a) > duration(b) ? a : b));
    expect(duration(waiter)).toBeGreaterThanOrEqual(100);
    expect(waiter.attributes['lock.attempts']).toBeGreaterThanOrEqual(2);
    // the waiter's acquire span ends when the first holder's hold span does, give or take
    const firstHold = holds.reduce((a, b) => (epochMs(a.startTime) < epochMs(b.startTime) ? a : b));
    expect(Math.abs(epochMs(waiter.endTime) - epochMs(firstHold.endTime))).toBeLessThan(250);
  });

  it('reports the leases held right now in the lock.held gauge, by key template', async () => {
    const { locks, inventory } = await start();
    // what the gauge's callback observes at a collection: one value per key template
    const held = async () => {
      const collected = await otel.collectMetrics();
      if (!collected.metrics.some((metric) => metric.descriptor.name === LOCK_METRICS.held)) return [];
      return collected.points(LOCK_METRICS.held).map(({ value, attributes }) => ({ value, attributes }));
    };
    // both hold their product until the gauge was read while they were inside
    let done!: () => void;
    const read = new Promise<void>((resolve) => (done = resolve));
    let inside = 0;
    let bothInside!: () => void;
    const entered = new Promise<void>((resolve) => (bothInside = resolve));
    const enter = () => {
      if (++inside === 2) bothInside();
    };
    const holding = Promise.all([inventory.reserve('a', read, enter), inventory.reserve('b', read, enter)]);
    await entered;
    const during = await held();
    done();
    await holding;
    expect(during).toEqual([{ value: 2, attributes: INVENTORY }]);
    const lock = await locks.acquire('other');
    expect(await held()).toEqual([
      { value: 0, attributes: INVENTORY },
      { value: 1, attributes: DIRECT },
    ]);
    await lock.release();
    await app!.close();
    app = undefined;
    // a closed application no longer reports
    expect(await held()).toEqual([]);
  });

  it('adds the resolved key only when resolvedKeys is on', async () => {
    const { inventory } = await start({ telemetry: { resolvedKeys: true } });
    await inventory.reserve('42');
    const acquisitions = (await otel.collectMetrics()).points(LOCK_METRICS.acquisitions);
    expect(acquisitions.map(({ value, attributes }) => ({ value, attributes }))).toEqual([
      { value: 1, attributes: { ...INVENTORY, 'lock.key': 'inventory:42' } },
    ]);
    expect((await otel.collectSpans()).ended('lock.hold')[0].attributes['lock.key']).toBe('inventory:42');
  });

  it('records nothing with telemetry: false, only metrics with traces: false, only spans with metrics: false', async () => {
    // no meter at all: an instrument that records nothing would not show in a collection
    const getMeter = jest.spyOn(otel.meterProvider, 'getMeter');
    const off = await start({ telemetry: false });
    await off.inventory.reserve('1');
    expect(getMeter).not.toHaveBeenCalled();
    expect((await otel.collectMetrics()).metrics).toEqual([]);
    expect((await otel.collectSpans()).started).toEqual([]);
    getMeter.mockRestore();
    await app!.close();

    const metricsOnly = await start({ telemetry: { traces: false } });
    await metricsOnly.inventory.reserve('1');
    expect((await otel.collectMetrics()).sum(LOCK_METRICS.acquisitions)).toBe(1);
    expect((await otel.collectSpans()).started).toEqual([]);
    await app!.close();

    const tracesOnly = await start({ telemetry: { metrics: false } });
    await tracesOnly.inventory.reserve('1');
    // still the one acquisition of the metrics-only app
    expect((await otel.collectMetrics()).sum(LOCK_METRICS.acquisitions)).toBe(1);
    expect((await otel.collectSpans()).ended('lock.hold')).toHaveLength(1);
  });

  it('listens to no lease without an SDK at bootstrap, unless traces: true asks for spans from one registered later', async () => {
    await otel.uninstall();
    const on = jest.spyOn(LockService.prototype, 'on');
    try {
      const plain = await start();
      expect(on).not.toHaveBeenCalled();
      otel = installOpenTelemetrySdk();
      await plain.inventory.reserve('1');
      expect((await otel.collectSpans()).started).toEqual([]);
      expect((await otel.collectMetrics()).metrics).toEqual([]);
      await app!.close();
      await otel.uninstall();

      const optedIn = await start({ telemetry: { traces: true } });
      expect(on).toHaveBeenCalled();
      otel = installOpenTelemetrySdk();
      await optedIn.inventory.reserve('1');
      expect((await otel.collectSpans()).ended('lock.hold')).toHaveLength(1);
    } finally {
      on.mockRestore();
    }
  });

  it('refuses a telemetry option that is neither a boolean nor an object of booleans', async () => {
    await expect(start({ telemetry: 'yes' as never })).rejects.toThrow(/"telemetry"/);
    await expect(start({ telemetry: { resolvedKeys: 1 } as never })).rejects.toThrow(/"telemetry.resolvedKeys"/);
  });

  it('instruments a plain LockManager through LockTelemetry.attach, until detached', async () => {
    const manager = new LockManager({ store: new MemoryLockStore() });
    const telemetry = await LockTelemetry.attach(manager);
    await (await manager.acquire('k')).release();
    telemetry!.detach();
    await (await manager.acquire('k')).release();
    expect((await otel.collectMetrics()).sum(LOCK_METRICS.acquisitions, { 'lock.store': 'MemoryLockStore' })).toBe(1);
    expect((await otel.collectSpans()).ended('lock.hold')).toHaveLength(1);
    await manager.close();
  });

  it('reports whether this process leads, with which term, and how long each term lasted', async () => {
    const manager = new LockManager({ store: new MemoryLockStore(), ttl: '10s' });
    const telemetry = await LockTelemetry.attach(manager);
    const leadership = { 'lock.leadership': 'relay', 'lock.store': 'MemoryLockStore' };
    const observed = async (name: string) =>
      (await otel.collectMetrics()).points(name).map(({ value, attributes }) => ({ value, attributes }));
    let term = 0;
    const handle = manager.lead('relay', (current) => {
      term = current.term;
      return new Promise((resolve) => current.signal.addEventListener('abort', resolve));
    });
    while (term === 0) await sleep(5);
    await sleep(50);

    expect(await observed(LOCK_METRICS.leader)).toEqual([{ value: 1, attributes: leadership }]);
    expect(await observed(LOCK_METRICS.leaderTerm)).toEqual([{ value: term, attributes: leadership }]);
    await handle.stop();
    const collected = await otel.collectMetrics();
    expect(collected.points(LOCK_METRICS.leader).map(({ value }) => value)).toEqual([0]);
    const duration = collected.histogram(LOCK_METRICS.leadershipDuration, {
      ...leadership,
      'lock.leadership.outcome': 'resigned',
      'lock.leadership.cause': 'stopped',
    });
    expect(duration.count).toBe(1);
    expect(duration.min).toBeGreaterThanOrEqual(0.05);
    telemetry!.detach();
    await manager.close();
  });

  it('records spans from an SDK registered after attach, and nothing while none is', async () => {
    await otel.uninstall();
    const manager = new LockManager({ store: new MemoryLockStore() });
    const telemetry = await LockTelemetry.attach(manager);
    await (await manager.acquire('before')).release();
    otel = installOpenTelemetrySdk();
    await (await manager.acquire('after')).release();
    const spans = await otel.collectSpans();
    expect(spans.ended('lock.acquire')).toHaveLength(1);
    expect(spans.ended('lock.hold')).toHaveLength(1);
    telemetry!.detach();
    await manager.close();
  });
});
