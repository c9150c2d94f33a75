// Prints the table of fault scenarios at the end of `npm run test:faults`: one row per scenario test,
// appended by the test itself (scenario.ts, recordRow) to FAULT_REPORT_FILE, with the test's result.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const COLUMNS = [
  ['scenario', 'Scenario'],
  ['processes', 'Procs'],
  ['operations', 'Ops'],
  ['sections', 'Sections'],
  ['faults', 'Faults injected'],
  ['staleRefused', 'Stale refused'],
  ['overlaps', 'Overlaps'],
  ['lostSignalled', 'Lost signalled'],
  ['violations', 'Violations'],
  ['seconds', 'Time s'],
  ['result', 'Result'],
];

/** Rows follow the story: crashes, data loss, the network, stalls, permits, leadership, then the security checks. */
const FILE_ORDER = ['crash', 'restart', 'network', 'stalls', 'permits', 'leadership', 'security'];
const rank = (file = '') => {
  const index = FILE_ORDER.findIndex((name) => file.endsWith(`/${name}.spec.ts`));
  return index < 0 ? FILE_ORDER.length : index;
};

export default class FaultTableReporter {
  constructor() {
    this.file = process.env.FAULT_REPORT_FILE;
    this.status = new Map();
  }

  onRunStart() {
    if (this.file) writeFileSync(this.file, '');
  }

  onTestResult(_test, testResult) {
    for (const assertion of testResult.testResults) this.status.set(assertion.fullName, assertion.status);
  }

  onRunComplete() {
    if (!this.file || !existsSync(this.file)) return;
    const rows = readFileSync(this.file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line, index) => ({ ...JSON.parse(line), index }))
      .sort((a, b) => rank(a.file) - rank(b.file) || a.index - b.index)
      .map((row) => ({ ...row, result: this.status.get(row.test) === 'passed' ? 'pass' : 'FAIL' }));
    if (rows.length === 0) return;
    const cells = [
      COLUMNS.map(([, title]) => title),
      ...rows.map((row) => COLUMNS.map(([key]) => String(row[key] ?? '-'))),
    ];
    const widths = COLUMNS.map((_, i) => Math.max(...cells.map((line) => line[i].length)));
    const format = (line) => `| ${line.map((cell, i) => cell.padEnd(widths[i])).join(' | ')} |`;
    const rule = `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`;
    const notes = rows.filter((row) => row.notes).map((row) => `- ${row.scenario}: ${row.notes}`);
    const total = rows.reduce((sum, row) => sum + row.violations, 0);
    process.stdout.write(
      [
        '',
        'Fault scenarios (violations: broken invariants, unhandled rejections, leaked tokens, hangs past bounds)',
        format(cells[0]),
        rule,
        ...cells.slice(1).map(format),
        '',
        ...notes,
        `Total violations: ${total}`,
        '',
      ].join('\n'),
    );
  }
}
