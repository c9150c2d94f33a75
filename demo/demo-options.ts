import { parseArgs } from 'node:util';

/** What `npm run demo -- [flags]` was asked for. */
export interface DemoOptions {
  /** Purchases fired at once, spread over the instances. @default 500 */
  readonly requests: number;
  /** Units in stock before the burst. @default 100 */
  readonly stock: number;
  /** Attempts of one buyer's purchase sent at once with one `Idempotency-Key`. @default 30 */
  readonly retries: number;
  /** Report ticks to count after the burst. @default 5 */
  readonly ticks: number;
  /** Print the report as JSON (progress still goes to stderr). @default false */
  readonly json: boolean;
  readonly help: boolean;
}

export const USAGE = `Usage: npm run demo -- [--requests 500] [--stock 100] [--retries 30] [--ticks 5] [--json]

Starts three instances of the sample app (and a redis-server of its own unless REDIS_URL is set), fires
--requests concurrent purchases of --stock units spread across them, sends one buyer's purchase --retries
times at once with one Idempotency-Key (then again after each 409's Retry-After, and once late to each
instance), counts report runs per tick over --ticks seconds, then does the same with LOCKS=off and prints
both side by side.`;

/** @throws Error with the usage when a flag is unknown or not a whole number */
export function parseDemoOptions(argv: string[]): DemoOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      requests: { type: 'string', default: '500' },
      stock: { type: 'string', default: '100' },
      retries: { type: 'string', default: '30' },
      ticks: { type: 'string', default: '5' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  return {
    requests: count('requests', values.requests, 1),
    stock: count('stock', values.stock, 1),
    retries: count('retries', values.retries, 1),
    ticks: count('ticks', values.ticks, 1),
    json: values.json,
    help: values.help,
  };
}

function count(flag: string, value: string, min: number): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number) || number < min) {
    throw new Error(`--${flag} must be a whole number of at least ${min}; got "${value}"\n\n${USAGE}`);
  }
  return number;
}
