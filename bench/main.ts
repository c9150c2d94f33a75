import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { BenchContext, Scenario } from './context.js';
import { FLOOR_POLL_MS, REFERENCES, contendersFor } from './libraries.js';
import { renderTable, renderTargets, spliceResults, type Table } from './report.js';
import { CommandLog } from './support/command-log.js';
import { gitRevision, versionOf } from './support/provenance.js';
import { BenchRedis } from './support/redis.js';
import { commandsPerAcquisition } from './tables/commands.js';
import { http } from './tables/http.js';
import { greedyInProcess, handoffInProcess } from './tables/in-process.js';
import { greedyInProcesses, handoffInProcesses } from './tables/processes.js';
import { readersWriterInProcess, semaphoreInProcess } from './tables/permits.js';
import { LEASES, RENEW_TTL, renewal } from './tables/renewal.js';
import { uncontendedLatency, uncontendedThroughput } from './tables/uncontended.js';
import { consensusPrice } from './tables/consensus.js';
import { judgeTargets } from './targets.js';

const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '4' },
    only: { type: 'string' },
    libs: { type: 'string' },
    out: { type: 'string', default: 'bench/results.md' },
    'no-write': { type: 'boolean', default: false },
  },
});

/** Scenarios in the order they run (the commands table sums up the ones before it). */
const SCENARIOS: readonly Scenario[] = [
  uncontendedLatency,
  uncontendedThroughput,
  handoffInProcess,
  greedyInProcess,
  handoffInProcesses,
  greedyInProcesses,
  commandsPerAcquisition,
  renewal,
  http,
  consensusPrice,
  semaphoreInProcess,
  readersWriterInProcess,
];

const only = flags.only ? new Set(flags.only.split(',').map(Number)) : undefined;
const onlyLibs = flags.libs ? new Set(flags.libs.split(',')) : undefined;
const chosen = <T extends { readonly name: string }>(list: readonly T[]): T[] =>
  list.filter((item) => !onlyLibs || onlyLibs.has(item.name));

async function main(): Promise<void> {
  const loadBefore = loadavg()[0];
  const redis = await BenchRedis.start();
  const context: BenchContext = {
    redis,
    durationMs: Number(flags.seconds) * 1000,
    warmupMs: 300,
    contenders: (role) => chosen(contendersFor(role)),
    chosen,
    commands: new CommandLog(),
  };
  const tables: Table[] = [];
  try {
    for (const scenario of SCENARIOS) {
      if (only && !only.has(scenario.id)) continue;
      console.error(`running ${scenario.id}. ${scenario.title}`);
      const table = await scenario.run(context);
      tables.push(table);
      console.log(`\n${renderTable(table, REFERENCES)}`);
    }
  } finally {
    await redis.stop();
  }
  const targetText = renderTargets(judgeTargets(tables, context.commands, { leases: LEASES, ttl: RENEW_TTL }));
  console.log(`\n## Targets\n\n${targetText}`);
  if (flags['no-write']) return;
  if (only) {
    // a partial run replaces its own sections only: the rest, and the targets, stay from the last full run
    const runLine =
      `- scenarios ${[...only].join(', ')} rerun alone: ${new Date().toISOString()}, nestjs-lock at ${gitRevision()}, ` +
      `load average (1 min) ${loadBefore.toFixed(2)} before, ${loadavg()[0].toFixed(2)} after, ` +
      `${context.durationMs / 1000} s per contender`;
    const rendered = tables.map((table) => ({ id: table.id, text: renderTable(table, REFERENCES) }));
    writeFileSync(flags.out as string, spliceResults(readFileSync(flags.out as string, 'utf8'), rendered, runLine));
    console.log(`\nwrote scenarios ${[...only].join(', ')} into ${flags.out}`);
    return;
  }
  const own = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
  const machine = [
    `- date: ${new Date().toISOString()}`,
    `- cpu: ${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} cores`,
    `- node ${process.version}, redis-server ${redis.version} (local, loopback, no persistence)`,
    `- nestjs-lock ${own.version} at ${gitRevision()}; ioredis ${versionOf('ioredis')}, node-redis ` +
      `${versionOf('redis')}, iovalkey ${versionOf('iovalkey')}, GLIDE ${versionOf('@valkey/valkey-glide')}, redlock ${versionOf('redlock')}, ` +
      `redis-semaphore ${versionOf('redis-semaphore')}, murlock ${versionOf('murlock')} (on its own node-redis ` +
      `${versionOf('murlock/node_modules/redis')})`,
    `- load average (1 min) ${loadBefore.toFixed(2)} before the run, ${loadavg()[0].toFixed(2)} after: the machine ` +
      'is shared, so other work may run alongside',
    `- ${context.durationMs / 1000} s per scenario and contender after ${context.warmupMs} ms of warm-up; floor waits ` +
      `by polling every ${FLOOR_POLL_MS} ms`,
  ];
  const document = [
    '# Benchmark results',
    '',
    'Written by `npm run bench`; numbers from one run on the machine below. Every contender runs against the same ' +
      'local redis-server that the bench starts on a free port, the keyspace flushed between scenarios.',
    '',
    ...machine,
    '',
    '## Results',
    '',
    tables.map((table) => renderTable(table, REFERENCES)).join('\n\n'),
    '',
    '## Targets',
    '',
    targetText,
    '',
  ].join('\n');
  writeFileSync(flags.out as string, document);
  console.log(`\nwrote ${flags.out}`);
}

await main();
