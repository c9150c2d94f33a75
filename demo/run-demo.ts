import { Redis } from 'ioredis';
import { performance } from 'node:perf_hooks';
import { parseDemoOptions, USAGE, type DemoOptions } from './demo-options.js';
import { ChildProcesses } from './child-processes.js';
import { ProgressLine } from './progress-line.js';
import { purchaseBurst, type PurchaseOutcome } from './purchase-burst.js';
import { startOwnRedis, type OwnRedis } from './redis-server.js';
import { retriedPurchase, type RetryAttempt } from './retried-purchase.js';
import { analyseRetries } from './retry-report.js';
import { renderReport } from './render-report.js';
import { watchReportRuns } from './report-runs.js';
import { analyseRun, lockedRunHolds, type RunReport } from './run-report.js';
import { startInstance, type SampleInstance } from './sample-instance.js';

/**
 * `npm run demo`: the sample app's three instances under a burst of purchases, one buyer's purchase retried
 * many times with one `Idempotency-Key`, and a per-second report, once with locks and once with LOCKS=off,
 * side by side. Exits 1 when the run with locks oversold, overlapped, ran the retried purchase other than
 * once or a report tick other than once; every process it started is stopped before it exits.
 */
const INSTANCE_IDS = ['a', 'b', 'c'];
const PRODUCT = 'demo-product';
const RETRIED_PRODUCT = 'demo-retried';

const processes = new ChildProcesses();
const progress = new ProgressLine();
let ownRedis: OwnRedis | undefined;
let interrupted = false;

// last resort, whatever ends the demo: no process it started may outlive it
process.on('exit', () => processes.killAll());
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    const code = signal === 'SIGINT' ? 130 : 143;
    if (interrupted) {
      processes.killAll();
      process.exit(code);
    }
    interrupted = true;
    progress.log(`${signal}: stopping the instances and Redis the demo started (again to kill them at once)`);
    progress.silence();
    // instances first, so they release their locks while Redis still runs; then Redis
    void processes.stopAll().finally(() => process.exit(code));
  });
}

async function main(): Promise<number> {
  let options: DemoOptions;
  try {
    options = parseDemoOptions(process.argv.slice(2));
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  if (options.help) {
    console.log(USAGE);
    return 0;
  }

  let redisUrl = process.env.REDIS_URL;
  if (redisUrl) {
    progress.log(
      `Redis: ${new URL(redisUrl).host} (REDIS_URL); the demo's keys go under "demo:" and are removed after`,
    );
  } else {
    ownRedis = await startOwnRedis(processes);
    redisUrl = ownRedis.url;
    progress.log(`Redis: started redis-server (pid ${ownRedis.process.pid}) at ${redisUrl}`);
  }

  const runId = `${Date.now().toString(36)}-${process.pid}`;
  const locked = await runOnce(options, redisUrl, `demo:${runId}:locked:`, true);
  const unlocked = await runOnce(options, redisUrl, `demo:${runId}:unlocked:`, false);
  await processes.stopAll();

  const ok = lockedRunHolds(locked);
  if (options.json) {
    const redis = ownRedis ? 'own' : 'REDIS_URL';
    console.log(JSON.stringify({ options, redis, ok, locked, unlocked, pids: processes.pids }, null, 2));
  } else {
    console.log(renderReport(options, locked, unlocked));
  }
  return ok ? 0 : 1;
}

/** One run: three instances, the burst, the report ticks; the instances are stopped before it returns. */
async function runOnce(options: DemoOptions, redisUrl: string, keyPrefix: string, locks: boolean): Promise<RunReport> {
  const label = locks ? 'with the lock' : 'without (LOCKS=off)';
  const starting = INSTANCE_IDS.map((id) => startInstance(processes, { id, redisUrl, keyPrefix, locks }));
  progress.log(`${label}: starting instances ${starting.map(({ id, pid }) => `${id} (pid ${pid})`).join(', ')}`);
  const started = await Promise.allSettled(starting.map(({ ready }) => ready));
  const instances: SampleInstance[] = [];
  for (const result of started) if (result.status === 'fulfilled') instances.push(result.value);
  const data = new Redis(redisUrl, { keyPrefix });
  try {
    const failure = started.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
    const urls = instances.map((instance) => instance.url);
    for (const instance of instances) progress.log(`${label}: instance ${instance.id} ready at ${instance.url}`);

    // a few purchases of another product first: the numbers should measure the lock, not a cold start
    for (const url of urls) {
      for (let i = 0; i < 5; i++) await fetch(`${url}/inventory/warm-up/purchase`, { method: 'POST' });
    }
    await call('PUT', `${urls[0]}/inventory/${PRODUCT}`, { stock: options.stock });
    let answered = 0;
    let sold = 0;
    let conflicts = 0;
    const burstStart = performance.now();
    const outcomes = await purchaseBurst(urls, PRODUCT, options.requests, (outcome: PurchaseOutcome) => {
      answered++;
      if (outcome.status === 201) sold++;
      if (outcome.status === 409) conflicts++;
      progress.update(`${label}: purchases answered ${answered}/${options.requests}, sold ${sold}, 409 ${conflicts}`);
    });
    const burstMs = performance.now() - burstStart;
    progress.done();

    // enough stock for every attempt to buy, so that without locks each one that runs shows as a deduction
    const retriedStock = options.retries + urls.length;
    await call('PUT', `${urls[0]}/inventory/${RETRIED_PRODUCT}`, { stock: retriedStock });
    let sent = 0;
    const attempts = await retriedPurchase(urls, RETRIED_PRODUCT, options.retries, (attempt: RetryAttempt) => {
      sent++;
      const what = attempt.status === 201 ? (attempt.replayed ? 'replayed' : 'ran') : String(attempt.status);
      progress.update(`${label}: one purchase with one Idempotency-Key, attempt ${sent}: ${what}`);
    });
    progress.done();
    const { stock: retriedLeft } = (await call('GET', `${urls[0]}/inventory/${RETRIED_PRODUCT}`)) as {
      stock: number;
    };

    const firstTick = Math.floor(Date.now() / 1000) + 1;
    const reportRuns = await watchReportRuns(data, firstTick, options.ticks, (seen) =>
      progress.update(`${label}: report ticks ${seen}/${options.ticks}`),
    );
    progress.done();
    const { stock: stockLeft } = (await call('GET', `${urls[0]}/inventory/${PRODUCT}`)) as { stock: number };
    const retried = analyseRetries(attempts, retriedStock, retriedLeft);
    return analyseRun({ locks, stock: options.stock, stockLeft, outcomes, retried, reportRuns, burstMs });
  } finally {
    await Promise.all(instances.map((instance) => instance.stop()));
    if (!ownRedis) await removeKeys(data, keyPrefix);
    data.disconnect();
  }
}

async function call(method: string, url: string, body?: unknown): Promise<unknown> {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${url} answered ${response.status}: ${await response.text()}`);
  return response.json();
}

/** Deletes the run's keys from a Redis the demo did not start. */
async function removeKeys(data: Redis, keyPrefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await data.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 500);
    cursor = next;
    // SCAN returns full names; the client would prefix them again
    if (keys.length > 0) await data.del(...keys.map((key) => key.slice(keyPrefix.length)));
  } while (cursor !== '0');
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  async (error: unknown) => {
    if (interrupted) return;
    progress.log(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
    await processes.stopAll().catch(() => undefined);
    process.exitCode = 1;
  },
);
