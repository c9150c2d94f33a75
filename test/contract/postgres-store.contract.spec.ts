import { postgresKind } from '../support/stores.js';
import { describeStoreContract } from './lock-store.contract.js';

describe('on a local PostgreSQL server', () => {
  beforeAll(() => postgresKind.server(), 60_000);
  afterAll(() => postgresKind.stop());

  describeStoreContract(postgresKind);
});
