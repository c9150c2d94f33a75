import { fmt } from './support/stats.js';

/** A column of a scenario table. */
export interface Column {
  readonly key: string;
  readonly label: string;
}

/** One contender's numbers in one scenario. */
export interface Row {
  readonly library: string;
  readonly values: Readonly<Record<string, number | string>>;
}

/** One scenario's table; `ratioOf` names the metric compared with the floor and with each library. */
export interface Table {
  readonly id: number;
  readonly title: string;
  readonly columns: readonly Column[];
  readonly rows: Row[];
  readonly ratioOf?: string;
  readonly notes: string[];
}

export function value(table: Table | undefined, library: string, key: string): number | undefined {
  const found = table?.rows.find((row) => row.library === library)?.values[key];
  return typeof found === 'number' ? found : undefined;
}

function cell(entry: number | string | undefined): string {
  return typeof entry === 'number' ? fmt(entry) : (entry ?? '-');
}

/**
 * The table as Markdown: its columns, then `÷ reference` columns for `ratioOf` (this row divided by that one)
 * for each of `references` that has a row.
 */
export function renderTable(table: Table, references: readonly string[]): string {
  const compared = table.ratioOf ? references.filter((name) => table.rows.some((row) => row.library === name)) : [];
  const ratioLabel = table.columns.find((column) => column.key === table.ratioOf)?.label ?? '';
  const header = ['library', ...table.columns.map((column) => column.label), ...compared.map((r) => `÷ ${r}`)];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`];
  for (const row of table.rows) {
    const ratios = compared.map((reference) => {
      const mine = row.values[table.ratioOf as string];
      const theirs = value(table, reference, table.ratioOf as string);
      if (reference === row.library || typeof mine !== 'number' || !theirs) return '';
      return `${(mine / theirs).toFixed(2)}×`;
    });
    lines.push(
      `| ${[row.library, ...table.columns.map((column) => cell(row.values[column.key])), ...ratios].join(' | ')} |`,
    );
  }
  const parts = [`### ${table.id}. ${table.title}`, '', lines.join('\n')];
  if (compared.length) parts.push('', `Ratios: this row's ${ratioLabel} divided by that contender's.`);
  if (table.notes.length) parts.push('', ...table.notes.map((note) => `- ${note}`));
  return parts.join('\n');
}

/** One target of the bench, judged. */
export interface TargetResult {
  readonly target: string;
  readonly measured: string;
  /** `undefined` when the scenario did not run. */
  readonly met: boolean | undefined;
  /** By how much it was missed (or the margin), in words. */
  readonly margin: string;
  readonly why: string;
}

/** A group of targets, judged together. */
export interface TargetSection {
  readonly title: string;
  readonly intro: string;
  readonly results: readonly TargetResult[];
}

export function renderTargets(sections: readonly TargetSection[]): string {
  return sections
    .map((section) => {
      const lines = ['| target | measured | met | margin | why |', '| --- | --- | --- | --- | --- |'];
      for (const t of section.results) {
        const met = t.met === undefined ? 'not run' : t.met ? 'yes' : '**no**';
        lines.push(`| ${t.target} | ${t.measured} | ${met} | ${t.margin} | ${t.why} |`);
      }
      return [`### ${section.title}`, '', section.intro, '', ...lines].join('\n');
    })
    .join('\n\n');
}

/** A scenario's rendered table, for {@link spliceResults}. */
export interface RenderedTable {
  readonly id: number;
  readonly text: string;
}

/**
 * A results document with the sections of `tables` put in (a section of the same number replaced, a new one in
 * number order) and `runLine` added to the machine list in place of an earlier line that starts alike; every
 * other section, and the targets, stay as an earlier full run wrote them.
 */
export function spliceResults(existing: string, tables: readonly RenderedTable[], runLine: string): string {
  const resultsAt = existing.indexOf('\n## Results\n');
  const targetsAt = existing.indexOf('\n## Targets\n');
  if (resultsAt < 0 || targetsAt < resultsAt) throw new Error('results file without ## Results and ## Targets');
  const header = existing.slice(0, resultsAt).trimEnd().split('\n');
  const sameRun = runLine.slice(0, runLine.indexOf(':') + 1);
  const machine = [...header.filter((line) => !line.startsWith(sameRun)), runLine];
  const body = existing.slice(existing.indexOf('\n', resultsAt + 1) + 1, targetsAt).trim();
  const sections = new Map<number, string>();
  for (const section of body.split(/\n(?=### \d+\. )/)) {
    const id = Number(/^### (\d+)\./.exec(section)?.[1]);
    if (!Number.isNaN(id)) sections.set(id, section.trim());
  }
  for (const table of tables) sections.set(table.id, table.text);
  const ordered = [...sections].sort((a, b) => a[0] - b[0]).map(([, text]) => text);
  return [...machine, '', '## Results', '', ordered.join('\n\n'), existing.slice(targetsAt)].join('\n');
}
