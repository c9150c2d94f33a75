import { Injectable, type Provider } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { Queue, QueueEvents } from 'bullmq';
import { LockInterceptor, type LockError } from '../../lib/index.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { uniquePrefix } from '../support/stores.js';
import { Gate } from './fixtures/gate.js';
import { startWorker, type RunningWorker } from './fixtures/worker-app.js';

/** Resolves with the first `event` of QueueEvents about `jobId`. */
function nextEvent<T extends { jobId: string }>(events: QueueEvents, event: string, jobId: string): Promise<T> {
  return new Promise((resolve) => {
    const listener = (args: T): void => {
      if (args.jobId !== jobId) return;
      events.off(event as 'completed', listener as never);
      resolve(args);
    };
    events.on(event as 'completed', listener as never);
  });
}

describe('@WithLock on BullMQ processors: a pair of workers on one job key', () => {
  let redis: RedisServerHandle;
  let connection: { host: string; port: number };
  let queue: Queue;
  let events: QueueEvents;
  let workers: RunningWorker[] = [];
  let failed: string[];
  let gate: Gate;

  beforeAll(async () => {
    redis = await startRedisServer();
    connection = { host: '127.0.0.1', port: redis.port };
  });

  afterAll(async () => {
    await redis.stop();
  });

  /** Starts two workers of one fresh queue, with the same lock options, and listens to the queue's events. */
  async function startPair(runs: string[], withLock = {}, providers: Provider[] = []): Promise<void> {
    gate = new Gate();
    const name = `orders-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    const lockOptions = { redis: redis.url, keyPrefix: uniquePrefix() };
    queue = new Queue(name, { connection });
    events = new QueueEvents(name, { connection });
    await events.waitUntilReady();
    failed = [];
    events.on('failed', ({ jobId }) => void failed.push(jobId));
    workers = [
      await startWorker(connection, name, gate, runs, lockOptions, withLock, providers),
      await startWorker(connection, name, gate, runs, lockOptions, withLock, providers),
    ];
  }

  afterEach(async () => {
    // a worker closes once its job is done
    gate.open();
    await Promise.all(workers.map((worker) => worker.close()));
    await events.close();
    await queue.close();
  });

  it('puts off the job whose key another worker holds, without failing it or spending an attempt, and runs it after', async () => {
    const runs: string[] = [];
    await startPair(runs);
    const first = await queue.add('ship', { orderId: 'o1' }, { attempts: 1 });
    await gate.reached(1);

    const second = await queue.add('ship', { orderId: 'o1' }, { attempts: 1 });
    const outcome = await Promise.race([
      nextEvent<{ jobId: string; delay: number }>(events, 'delayed', second.id!).then((event) => ({
        delayedUntil: event.delay,
      })),
      nextEvent<{ jobId: string; failedReason: string }>(events, 'failed', second.id!).then((event) => ({
        failed: event.failedReason,
      })),
    ]);

    expect(outcome).toEqual({ delayedUntil: expect.any(Number) });
    // the holder's lease is 2 s: the job comes back when it may have ended, not at once and not in 30 s
    expect((outcome as { delayedUntil: number }).delayedUntil - Date.now()).toBeLessThanOrEqual(2000);
    expect(runs).toEqual([first.id]);
    const secondDone = nextEvent<{ jobId: string; returnvalue: string }>(events, 'completed', second.id!);
    gate.open();
    await gate.reached(2);
    gate.open();
    expect((await secondDone).returnvalue).toBe('shipped o1');
    expect(runs).toEqual([first.id, second.id]);
    expect(failed).toEqual([]);
    // attempts: 1, and yet it ran: putting it off spent none
    expect((await queue.getJob(second.id!))?.attemptsMade).toBe(1);
    expect(workers.flatMap((worker) => worker.logger.errors())).toEqual([]);
  });

  it("follows the application's own LockInterceptor.toJobError over the module's: here a busy key fails the attempt", async () => {
    const runs: string[] = [];
    await startPair(runs, {}, [{ provide: APP_INTERCEPTOR, useClass: FailWhenBusy }]);
    const first = await queue.add('ship', { orderId: 'o3' });
    await gate.reached(1);

    const second = await queue.add('ship', { orderId: 'o3' }, { attempts: 1 });
    const outcome = await Promise.race([
      nextEvent<{ jobId: string }>(events, 'delayed', second.id!).then(() => 'delayed'),
      nextEvent<{ jobId: string; failedReason: string }>(events, 'failed', second.id!).then(
        (event) => event.failedReason,
      ),
    ]);
    gate.open();

    expect(outcome).toBe('busy: order:<job.data.orderId>');
    expect(runs).toEqual([first.id]);
  });

  it("completes the job whose key is held without running it when the policy is 'skip'", async () => {
    const runs: string[] = [];
    await startPair(runs, { onContention: 'skip' });
    const first = await queue.add('ship', { orderId: 'o2' });
    await gate.reached(1);

    const second = await queue.add('ship', { orderId: 'o2' });
    const outcome = await Promise.race([
      nextEvent<{ jobId: string; returnvalue: unknown }>(events, 'completed', second.id!).then((event) => ({
        completed: event.returnvalue,
      })),
      nextEvent<{ jobId: string; failedReason: string }>(events, 'failed', second.id!).then((event) => ({
        failed: event.failedReason,
      })),
    ]);
    gate.open();

    expect(outcome).toEqual({ completed: null });
    expect(runs).toEqual([first.id]);
    expect(failed).toEqual([]);
    expect(workers.flatMap((worker) => worker.logger.errors())).toEqual([]);
  });
});

/** An application's own job mapping, registered beside the module's interceptor: it must win. */
@Injectable()
class FailWhenBusy extends LockInterceptor {
  protected override toJobError(error: LockError): Error {
    return new Error(`busy: ${error.keyTemplate}`);
  }
}
