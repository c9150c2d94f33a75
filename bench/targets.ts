import type { Table, TargetSection } from './report.js';
import type { CommandLog } from './support/command-log.js';
import { judge } from './targets/check.js';
import { commonCaseChecks } from './targets/common-case.js';
import { handoffAndRenewalChecks } from './targets/handoff-and-renewal.js';
import { nestPathChecks } from './targets/nest-path.js';

/** Every target the bench judges, by what it measures, against the tables of this run. */
export function judgeTargets(
  tables: readonly Table[],
  commands: CommandLog,
  renewal: { leases: number; ttl: number },
): TargetSection[] {
  const byId = (id: number) => tables.find((table) => table.id === id);
  return [
    {
      title: 'The Nest path (issue 25)',
      intro:
        'What a Nest user runs: LockService from LockModule.forRoot({ redis }) with options at each call, and ' +
        '@WithLock over HTTP. Ratios are within this run.',
      results: nestPathChecks(byId, commands).map(judge),
    },
    {
      title: 'The common case first',
      intro: 'Ratios are within this run: every contender ran on the same machine at the same time.',
      results: commonCaseChecks(byId, commands).map(judge),
    },
    {
      title: 'Fast, fair hand-off and batched renewal',
      intro: 'Targets the common case does not restate: a change for it must keep them.',
      results: handoffAndRenewalChecks(byId, renewal).map(judge),
    },
  ];
}
