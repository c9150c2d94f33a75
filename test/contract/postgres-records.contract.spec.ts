import { postgresKind } from '../support/stores.js';
import { describeResponseRecords } from './response-records.contract.js';

describe('on a local PostgreSQL server', () => {
  beforeAll(() => postgresKind.server(), 60_000);
  afterAll(() => postgresKind.stop());

  describeResponseRecords(postgresKind);
});
