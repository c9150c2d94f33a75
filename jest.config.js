import { swcOptions } from './scripts/swc-options.js';

/** Jest in ESM mode: NestJS 12 ships ES modules only, which CommonJS Jest cannot load on Node 20. */
const swc = ['@swc/jest', swcOptions];

export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  // the sample imports the package by its name, as an application would; here that name is lib/
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1', '^nestjs-lock$': '<rootDir>/lib/index.ts' },
  testMatch: ['<rootDir>/lib/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts'],
  // the fault-injection suite runs on its own: npm run test:faults (jest.faults.config.js)
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/faults/'],
  // test files in parallel, each worker with a redis-server of its own (global-setup.ts); servers a file
  // stops, restarts or reconfigures it starts itself, on free ports
  maxWorkers: Number(process.env.JEST_WORKERS ?? 3),
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 30000,
};
