import { OURS } from '../libraries.js';
import { BATCH } from '../scenarios/renewal.js';
import { fmt } from '../support/stats.js';
import { at, ratio, type Check, type Tables } from './check.js';

const PER_WORKER = 'nestjs-lock/per-worker';

/**
 * The targets of fast, fair hand-off and batched renewal that the common case (common-case.ts) does not
 * restate: they stand, so a change for the common case must not lose them.
 */
export function handoffAndRenewalChecks(t: Tables, renewal: { leases: number; ttl: number }): Check[] {
  const checks: Check[] = [];
  for (const [id, library] of [
    [3, OURS],
    [3, PER_WORKER],
    [5, OURS],
  ] as const) {
    const scope = `(${id}${library === PER_WORKER ? '/per-worker' : ''})`;
    checks.push({
      target: `handoff CS/s ≥ 15× redlock ${scope}`,
      measured: ratio(at(t, id, library, 'rate'), at(t, id, 'redlock', 'rate')),
      unit: '×',
      limit: 15,
      compare: '>=',
      why: () =>
        `redlock made ${fmt(at(t, id, 'redlock', 'rate'))} CS/s (its waiters sleep 200 ± 100 ms between tries), ` +
        `${library} ${fmt(at(t, id, library, 'rate'))}: a grant every ${fmt(1000 / (at(t, id, library, 'rate') ?? NaN))} ms.`,
    });
  }
  for (const [id, library] of [
    [3, PER_WORKER],
    [5, OURS],
  ] as const) {
    const scope = `(${id}${library === PER_WORKER ? '/per-worker' : ''})`;
    const across =
      'Across clients a hand-off is the release (1 round trip, granting the key to the client first in line), ' +
      'the notice to that client and its wake-up.';
    checks.push(
      {
        target: `handoff gap p50 ≤ 0.5 ms ${scope}`,
        measured: at(t, id, library, 'gapP50'),
        unit: ' ms',
        limit: 0.5,
        compare: '<=',
        why: () => across,
      },
      {
        target: `handoff gap p99 ≤ 2 ms ${scope}`,
        measured: at(t, id, library, 'gapP99'),
        unit: ' ms',
        limit: 2,
        compare: '<=',
        why: () =>
          `${across} The tail follows the event loop and the OS run queue: floor gap p99 ${fmt(at(t, id, 'floor', 'gapP99'))} ms.`,
      },
    );
  }
  for (const library of [OURS, PER_WORKER]) {
    const scope = library === OURS ? '(4)' : '(4/per-worker)';
    checks.push(
      {
        target: `greedy wait max ≤ 100 ms ${scope}`,
        measured: at(t, 4, library, 'waitMax'),
        unit: ' ms',
        limit: 100,
        compare: '<=',
        why: () =>
          `Jain ${fmt(at(t, 4, library, 'jain'))}, wait p50 ${fmt(at(t, 4, library, 'waitP50'))} ms, p99 ` +
          `${fmt(at(t, 4, library, 'waitP99'))} ms: the maximum is a stall on top of a full round (the process ` +
          'not getting a CPU on a shared machine, or a GC pause).',
      },
      {
        target: `greedy Jain ≥ 0.95 ${scope}`,
        measured: at(t, 4, library, 'jain'),
        unit: '',
        limit: 0.95,
        compare: '>=',
        why: () =>
          'A reservation that lapsed (the client first in line did not claim the key within the hand-off window) ' +
          'lets the next release go to whoever asks first.',
      },
    );
  }
  for (const [column, library, label] of [
    ['s3', OURS, '3'],
    ['s3', PER_WORKER, '3/per-worker'],
    ['s4', OURS, '4'],
    ['s4', PER_WORKER, '4/per-worker'],
    ['s5', OURS, '5'],
  ] as const) {
    checks.push({
      target: `≤ 6 Redis commands per contended acquisition (${label})`,
      measured: at(t, 7, library, column),
      unit: '',
      limit: 6,
      compare: '<=',
      why: () =>
        'Between processes a hand-off takes two scripts: the waiter refused once (it marks the lease, joins the ' +
        'line with its request in its entry, sent before the release and so off the hand-off path; a ' +
        'key refused at its last first ask skips the plain SET NX) and the release (which grants that request ' +
        'and tells its process), each counted with the commands it runs; they are in the notes of table 7.',
    });
  }
  const perBatch = renewal.leases / (renewal.ttl / 3000) / BATCH;
  checks.push(
    {
      target: `renewals batched: EVALSHA sent/s ≈ leases/(ttl/3)/${BATCH} = ${fmt(perBatch)} (≤ 1.5× that)`,
      measured: at(t, 8, OURS, 'evalsha'),
      unit: '/s',
      limit: perBatch * 1.5,
      compare: '<=',
    },
    {
      target: `${renewal.leases.toLocaleString('en-US')} leases: event-loop lag p99 < 20 ms`,
      measured: at(t, 8, OURS, 'lagP99'),
      unit: ' ms',
      limit: 20,
      compare: '<',
      why: () =>
        'Timer lateness includes the time this process waits for a CPU (load average in the header); the floor, ' +
        `renewing the same leases, shows ${fmt(at(t, 8, 'floor', 'lagP99'))} ms p99 in the same run.`,
    },
    {
      target: `${renewal.leases.toLocaleString('en-US')} leases: none lost`,
      measured: at(t, 8, OURS, 'lost'),
      unit: '',
      limit: 0,
      compare: '<=',
    },
  );
  return checks;
}
