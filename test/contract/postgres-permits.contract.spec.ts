import { postgresPermitKind } from '../support/permit-stores.js';
import { postgresKind } from '../support/stores.js';
import { describePermitContract } from './permit-store.contract.js';

describe('on a local PostgreSQL server', () => {
  beforeAll(() => postgresKind.server(), 60_000);
  afterAll(() => postgresKind.stop());

  describePermitContract(postgresPermitKind, false);
});
