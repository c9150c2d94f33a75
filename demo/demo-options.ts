import { parseArgs } from 'node:util';

/** What `npm run demo -- [flags]` was asked for. */
export interface DemoOptions {
  /** Purchases fired at once, spread over the instances. @default 500 */
  readonly requests: number;
  /** Units in stock before the burst. @default 100 */
  readonly stock: number;
  /** Report ticks to count after the burst. @default 5 */
  readonly ticks: number;
  /** Print the report as JSON (progress still goes to stderr). @default false */
  readonly json: boolean;
  readonly help: boolean;
}

export const USAGE = `Usage: npm run demo -- [--requests 500] [--stock 100] [--ticks 5] [--json]

Starts three instances of the sample app (and a redis-server of its own unless REDIS_URL is set), fires
--requests concurrent purchases of --stock units spread across them, counts report runs per tick over
--ticks seconds, then does the same with LOCKS=off and prints both side by side.`;

/** @throws Error with the usage when a flag is unknown or not a whole number */
export function parseDemoOptions(argv: string[]): DemoOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      requests: { type: 'string', default: '500' },
      stock: { type: 'string', default: '100' },
      ticks: { type: 'string', default: '5' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  return {
    requests: count('requests', values.requests, 1),
    stock: count('stock', values.stock, 1),
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
