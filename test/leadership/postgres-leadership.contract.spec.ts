import { postgresKind } from '../support/stores.js';
import { describeLeadership } from './leadership.contract.js';

describe('on a local PostgreSQL server', () => {
  beforeAll(() => postgresKind.server(), 60_000);
  afterAll(() => postgresKind.stop());

  describeLeadership(postgresKind);
});
