import type { Scenario } from '../context.js';
import { LIBRARIES } from '../libraries.js';
import type { Table } from '../report.js';

/** The scenarios whose commands per acquisition the table shows, as its columns. */
const MEASURED = [
  { scenario: 1, label: 'uncontended (1)' },
  { scenario: 3, label: 'handoff (3)' },
  { scenario: 4, label: 'greedy (4)' },
  { scenario: 5, label: 'handoff, processes (5)' },
  { scenario: 6, label: 'greedy, processes (6)' },
];

/** Scenario 7: server commands per acquisition, as the earlier scenarios measured them. */
export const commandsPerAcquisition: Scenario = {
  id: 7,
  title: 'Redis commands per successful acquisition',
  async run(context) {
    const table: Table = {
      id: this.id,
      title: this.title,
      columns: MEASURED.map(({ scenario, label }) => ({ key: `s${scenario}`, label })),
      ratioOf: 's1',
      rows: [],
      notes: [
        'INFO commandstats deltas over the measured runs of those scenarios divided by the grants in them. Redis ' +
          'counts the commands a Lua script runs as well as the EVALSHA (or EVAL) that runs it; SUBSCRIBE and ' +
          'UNSUBSCRIBE of waiters count too. No measurement of its own: client CPU is in the scenarios’ rows.',
      ],
    };
    for (const library of LIBRARIES) {
      const values: Record<string, number> = {};
      for (const { scenario } of MEASURED) {
        const seen = context.commands.get(scenario, library.name);
        if (seen) values[`s${scenario}`] = seen.perAcquisition;
      }
      if (Object.keys(values).length) table.rows.push({ library: library.name, values });
    }
    for (const scenario of [1, 5, 6]) {
      for (const [library, seen] of context.commands.of(scenario)) {
        table.notes.push(`(${scenario}) ${library}: ${seen.breakdown}`);
      }
    }
    return table;
  },
};
