// The fault-injection suite (npm run test:faults): the specs under test/faults, which the default config
// leaves out, with a reporter that prints one row per scenario at the end.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import base from './jest.config.js';

process.env.FAULT_REPORT_FILE ??= join(tmpdir(), `nestjs-lock-faults-${process.pid}.jsonl`);

export default {
  ...base,
  testMatch: ['<rootDir>/test/faults/**/*.spec.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  reporters: ['default', '<rootDir>/test/faults/fault-table.reporter.js'],
  testTimeout: 120_000,
};
