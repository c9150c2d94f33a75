import type { Table, TargetSection } from './report.js';
import type { CommandLog } from './support/command-log.js';
import { judge } from './targets/check.js';
import { issue14Checks } from './targets/issue-14.js';
import { issue4Checks } from './targets/issue-4.js';

/** Every target the bench judges, by issue, against the tables of this run. */
export function judgeTargets(
  tables: readonly Table[],
  commands: CommandLog,
  renewal: { leases: number; ttl: number },
): TargetSection[] {
  const byId = (id: number) => tables.find((table) => table.id === id);
  return [
    {
      title: 'Issue #14: the common case first',
      intro: 'Ratios are within this run: every contender ran on the same machine at the same time.',
      results: issue14Checks(byId, commands).map(judge),
    },
    {
      title: 'Issue #4: fast, fair hand-off and batched renewal (targets #14 does not restate)',
      intro: 'These stand: a change for #14 must keep them.',
      results: issue4Checks(byId, renewal).map(judge),
    },
  ];
}
