import { SERVICE } from '../contenders/nestjs-lock-service.js';
import type { CommandLog } from '../support/command-log.js';
import { fmt } from '../support/stats.js';
import { at, bestPeer, ratio, type Check, type Tables } from './check.js';

/** Where a cycle of the Nest path goes, against the floor's, in scenario `id`. */
function cost(t: Tables, log: CommandLog, id: number): string {
  return (
    `Client CPU ${fmt(at(t, id, SERVICE, 'clientCpu'))} vs ${fmt(at(t, id, 'floor', 'clientCpu'))} µs per cycle ` +
    `(floor), server CPU ${fmt(at(t, id, SERVICE, 'serverCpu'))} vs ${fmt(at(t, id, 'floor', 'serverCpu'))} µs, ` +
    `server commands ${log.get(id, SERVICE)?.breakdown ?? '-'}. As many commands as the floor's; the rest is the ` +
    "engine's client work (the acquisition, the lease's bookkeeping, the holder record in the SET's value) and the " +
    "module client's coalesced writes and command deadlines; docs/benchmarks.md splits the client CPU, with profiles."
  );
}

/**
 * The targets of issue 25, judged on the path a Nest user takes: `LockService` from `LockModule.forRoot({ redis })`
 * with options written at each call, and `@WithLock` over HTTP.
 */
export function nestPathChecks(t: Tables, log: CommandLog): Check[] {
  const floorP50 = at(t, 1, 'floor', 'p50');
  const highestRate = bestPeer(t, 2, 'rate', 'highest');
  const handoffs = log.get(6, SERVICE);
  const permits = log.get(11, SERVICE);
  const checks: Check[] = [
    {
      target: 'LockService: uncontended p50 ≤ 1.05× floor',
      measured: ratio(at(t, 1, SERVICE, 'p50'), floorP50),
      unit: '×',
      limit: 1.05,
      compare: '<=',
      why: () => `The floor's cycle is ${fmt((floorP50 ?? NaN) * 1000)} µs. ${cost(t, log, 1)}`,
    },
    {
      target: 'LockService: client CPU per uncontended cycle ≤ 1.2× floor’s',
      measured: ratio(at(t, 1, SERVICE, 'clientCpu'), at(t, 1, 'floor', 'clientCpu')),
      unit: '×',
      limit: 1.2,
      compare: '<=',
      why: () => cost(t, log, 1),
    },
    {
      target: 'LockService: 64-loop throughput ≥ 0.90× floor',
      measured: ratio(at(t, 2, SERVICE, 'rate'), at(t, 2, 'floor', 'rate')),
      unit: '×',
      limit: 0.9,
      compare: '>=',
      why: () =>
        'CPU-bound on 2 cores shared by this process and redis-server: throughput follows client + server CPU ' +
        `per cycle. ${cost(t, log, 2)}`,
    },
    {
      target: `LockService: 64-loop throughput above every other contender (÷ ${highestRate?.name ?? '-'})`,
      measured: ratio(at(t, 2, SERVICE, 'rate'), highestRate?.value),
      unit: '×',
      limit: 1,
      compare: '>',
      why: () =>
        `${highestRate?.name}: client + server CPU ${fmt(at(t, 2, highestRate?.name ?? '', 'clientCpu'))} + ` +
        `${fmt(at(t, 2, highestRate?.name ?? '', 'serverCpu'))} µs per cycle. ${cost(t, log, 2)}`,
    },
    {
      target: 'LockService, 8 processes greedy: CS/s ≥ 1.0× floor’s',
      measured: ratio(at(t, 6, SERVICE, 'rate'), at(t, 6, 'floor', 'rate')),
      unit: '×',
      limit: 1,
      compare: '>=',
      why: () =>
        `A grant every ${fmt(1000 / (at(t, 6, SERVICE, 'rate') ?? NaN))} ms: the critical section ` +
        `${fmt(at(t, 6, SERVICE, 'csMean'))} ms and a hand-off to another process ${fmt(at(t, 6, SERVICE, 'gapP50'))} ms ` +
        `(p50), which wakes an idle process on 2 shared cores; the floor re-took the key itself in ` +
        `${fmt(at(t, 6, 'floor', 'self'))}% of its grants (ours ${fmt(at(t, 6, SERVICE, 'self'))}%), which costs no hand-off.`,
    },
    {
      target: 'LockService, 8 processes greedy: Jain ≥ 0.99',
      measured: at(t, 6, SERVICE, 'jain'),
      unit: '',
      limit: 0.99,
      compare: '>=',
    },
    {
      target: 'LockService, 8 processes greedy: wait max ≤ 50 ms',
      measured: at(t, 6, SERVICE, 'waitMax'),
      unit: ' ms',
      limit: 50,
      compare: '<=',
      why: () =>
        `A round of the 7 others takes ${fmt((7 * 1000) / (at(t, 6, SERVICE, 'rate') ?? NaN))} ms at this rate; the ` +
        `floor's wait max in the same run is ${fmt(at(t, 6, 'floor', 'waitMax'))} ms. Where the longest waits ` +
        'come from, measured: docs/benchmarks.md ("What is not done yet").',
    },
    {
      target: 'LockService, 8 processes greedy: ≤ 8 server commands per cross-process hand-off',
      measured: handoffs?.perAcquisition,
      unit: '',
      limit: 8,
      compare: '<=',
      why: () =>
        `Per hand-off: ${handoffs?.breakdown}. Two scripts: the release that grants the first in line (EVALSHA, ` +
        'GET, LPOP of its entry with its request, SET, PUBLISH to its process) and the releaser’s own refused ask ' +
        '(EVALSHA, SET NX GET, RPUSH of its entry; no PTTL: the releaser knows the end of the lease its release ' +
        'granted). A waiter told by the line sends nothing until its grant; the rest is the start of the run (each ' +
        'process’s first refusal, its SUBSCRIBE, and one more request because its first went before its subscription).',
    },
    {
      target: 'LockService, semaphore of 3 under 8 workers: grants/s ≥ 1.0× redis-semaphore',
      measured: ratio(at(t, 11, SERVICE, 'rate'), at(t, 11, 'redis-semaphore', 'rate')),
      unit: '×',
      limit: 1,
      compare: '>=',
      why: () =>
        `Wait p50 ${fmt(at(t, 11, SERVICE, 'waitP50'))} ms vs ${fmt(at(t, 11, 'redis-semaphore', 'waitP50'))} ms ` +
        `(redis-semaphore), gap p50 ${fmt(at(t, 11, SERVICE, 'gapP50'))} vs ` +
        `${fmt(at(t, 11, 'redis-semaphore', 'gapP50'))} ms; commands per grant ${permits?.breakdown ?? '-'}.`,
    },
    {
      target: 'LockService, semaphore of 3 under 8 workers: ≤ 12 server commands per grant',
      measured: permits?.perAcquisition,
      unit: '',
      limit: 12,
      compare: '<=',
      why: () =>
        `Per grant: ${permits?.breakdown}. Two scripts per grant: the release, which grants the first place that ` +
        'fits (EVALSHA, TIME, HMGET of the resource, ZRANGE for the prune, ZREM + HDEL of the permit, ZRANGE + ' +
        'HMGET of the line, ZCARD, GET of the lock key, ZADD + HSET of the grant, ZREM + HDEL of its place, PEXPIRE ' +
        'GT of the guard: 15), and the releaser’s refused ask, which takes a place (EVALSHA, TIME, HMGET, ZRANGE, ' +
        'ZRANGE + HMGET, ZCARD, GET, ZADD + HSET of the place, PTTL: 11). A resource is three keys (the permits, ' +
        'the records, the line), so every step is a command of its own; 12 needs its state in one value, read and ' +
        'written once per script (TIME, GET, GET of the lock key, SET: about 5 a script), a new layout that old ' +
        'and new processes must not share during a rolling deploy.',
    },
    {
      target: 'LockService, semaphore of 3 under 8 workers: Jain ≥ 0.99',
      measured: at(t, 11, SERVICE, 'jain'),
      unit: '',
      limit: 0.99,
      compare: '>=',
    },
  ];
  for (const platform of ['express', 'fastify']) {
    checks.push({
      target: `@WithLock adds ≤ 0.15 ms p50 to an HTTP request (${platform})`,
      measured: at(t, 9, `${platform}, @WithLock`, 'added'),
      unit: ' ms',
      limit: 0.15,
      compare: '<=',
      why: () =>
        `The floor's lock taken by hand in the same handler adds ${fmt(at(t, 9, `${platform}, floor lock by hand`, 'added'))} ` +
        `ms (its two Redis round trips; a PING: ${fmt(at(t, 9, 'Redis PING', 'p50'))} ms); @WithLock adds ` +
        `${fmt(at(t, 9, `${platform}, @WithLock`, 'overFloor'))} ms over it, of which LockService taken by hand ` +
        `${fmt(at(t, 9, `${platform}, LockService by hand`, 'overFloor'))} ms and the decorator over that ` +
        `${fmt(at(t, 9, `${platform}, @WithLock`, 'overService'))} ms. CPU per request ` +
        `${fmt(at(t, 9, `${platform}, @WithLock`, 'clientCpu'))} µs vs ` +
        `${fmt(at(t, 9, `${platform}, LockService by hand`, 'clientCpu'))} µs with LockService by hand, ` +
        `${fmt(at(t, 9, `${platform}, floor lock by hand`, 'clientCpu'))} µs with the floor's and ` +
        `${fmt(at(t, 9, `${platform}, undecorated`, 'clientCpu'))} µs undecorated.`,
    });
  }
  return checks;
}
