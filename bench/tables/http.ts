import { Agent } from 'node:http';
import type { Scenario } from '../context.js';
import type { Table } from '../report.js';
import {
  ENDPOINTS,
  load,
  redisRoundTrips,
  sequentialRequests,
  startApp,
  type BenchApp,
  type Endpoint,
} from '../scenarios/http.js';
import { cpuMsSince } from '../support/cpu.js';
import { spread } from '../support/stats.js';

const SLICE_LATENCY = 250;
/** Concurrent connections of the throughput run. */
export const HTTP_CONNECTIONS = 16;

/** Latencies and CPU of the sequential requests of one row, over all its slices. */
interface Sample {
  readonly latencies: number[];
  cpuMs: number;
}

/** How each endpoint of scenario 9 is named in its rows. */
const ROW_NAMES: Readonly<Record<Endpoint, string>> = {
  plain: 'undecorated',
  floor: 'floor lock by hand',
  service: 'LockService by hand',
  locked: '@WithLock',
};

/** Scenario 9: one Nest endpoint undecorated, with the floor's lock taken by hand, and with `@WithLock`. */
export const http: Scenario = {
  id: 9,
  title: 'HTTP: the same Nest endpoint undecorated and with @WithLock',
  async run(context) {
    const table: Table = {
      id: this.id,
      title: this.title,
      columns: [
        { key: 'p50', label: 'p50 ms' },
        { key: 'p99', label: 'p99 ms' },
        { key: 'added', label: 'added p50 ms' },
        { key: 'overFloor', label: 'over floor p50 ms' },
        { key: 'overService', label: 'over LockService p50 ms' },
        { key: 'clientCpu', label: 'CPU µs/request' },
        { key: 'rate', label: `req/s, ${HTTP_CONNECTIONS} connections` },
        { key: 'non2xx', label: 'non-2xx' },
      ],
      rows: [],
      notes: [
        "POST /items/:id/plain, POST /items/:id/floor (the floor contender's `SET NX PX` and `EVALSHA` release, " +
          'awaited in the handler), POST /items/:id/service (`LockService.acquire()` with the module’s defaults, ' +
          "released in a `finally`) and POST /items/:id/locked (`@WithLock('bench:item:<id>')`) on one Nest app per " +
          'platform, LockModule.forRoot({ redis }) on the bench’s Redis; a new id per request, so every lock is free ' +
          '(what the decorator costs, not contention).',
        `Latency: sequential requests on one keep-alive connection, endpoints taking turns in slices of ${SLICE_LATENCY} ms ` +
          '(autocannon keeps whole milliseconds only). Added: this row’s p50 minus the undecorated p50 of its platform; ' +
          'over floor: this row’s p50 minus the floor’s, what the engine (and the decorator) add to the two round ' +
          'trips; over LockService: the @WithLock p50 minus LockService’s by hand, what the decorator and the ' +
          'interceptor add. ' +
          'Redis PING: sequential round trips in the same slices, the unit of the target.',
        'CPU per request: this process over the sequential requests, which holds the app, its Redis client and ' +
          'the requesting client alike; the difference between two rows of a platform is what the second adds.',
        `req/s: autocannon, ${HTTP_CONNECTIONS} connections, ${context.durationMs / 2000} s per endpoint, after the latency run.`,
      ],
    };
    await context.redis.reset();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const apps: BenchApp[] = [];
    const samples = new Map<string, Sample>();
    const record = async (name: string, measure: () => Promise<number[]>) => {
      const sample = samples.get(name) ?? { latencies: [], cpuMs: 0 };
      samples.set(name, sample);
      const before = process.cpuUsage();
      sample.latencies.push(...(await measure()));
      sample.cpuMs += cpuMsSince(before);
    };
    try {
      for (const platform of ['express', 'fastify'] as const) apps.push(await startApp(platform, context.redis.url));
      for (const app of apps) {
        for (const endpoint of ENDPOINTS) await sequentialRequests(app, endpoint, context.warmupMs, agent);
      }
      for (let round = 0; round < Math.max(1, Math.round(context.durationMs / SLICE_LATENCY)); round++) {
        for (const app of apps) {
          for (const endpoint of ENDPOINTS) {
            await record(`${app.platform} ${endpoint}`, () => sequentialRequests(app, endpoint, SLICE_LATENCY, agent));
          }
        }
        await record('ping', () => redisRoundTrips(context.redis.url, SLICE_LATENCY / 2));
      }
      for (const app of apps) {
        const p50Of = (endpoint: Endpoint) => spread(samples.get(`${app.platform} ${endpoint}`)?.latencies ?? []).p50;
        const plainP50 = p50Of('plain');
        for (const endpoint of ENDPOINTS) {
          const sample = samples.get(`${app.platform} ${endpoint}`) as Sample;
          const { p50, p99 } = spread(sample.latencies);
          const loaded = await load(app, endpoint, HTTP_CONNECTIONS, context.durationMs / 2000);
          table.rows.push({
            library: `${app.platform}, ${ROW_NAMES[endpoint]}`,
            values: {
              p50,
              p99,
              ...(endpoint === 'plain' ? {} : { added: p50 - plainP50 }),
              ...(endpoint === 'service' || endpoint === 'locked' ? { overFloor: p50 - p50Of('floor') } : {}),
              ...(endpoint === 'locked' ? { overService: p50 - p50Of('service') } : {}),
              clientCpu: (sample.cpuMs * 1000) / sample.latencies.length,
              rate: loaded.requestsPerSecond,
              non2xx: loaded.non2xx + loaded.errors,
            },
          });
        }
      }
      // no CPU column for PING: each slice of it opens and closes its own connection
      const { p50, p99 } = spread(samples.get('ping')?.latencies ?? []);
      table.rows.push({ library: 'Redis PING', values: { p50, p99 } });
    } finally {
      agent.destroy();
      await Promise.all(apps.map((app) => app.close()));
    }
    return table;
  },
};
