import { iovalkeyClusterPermitKind } from '../support/client-stores.js';
import { clusterKind } from '../support/stores.js';
import { describePermitContract } from './permit-store.contract.js';

describe('on a local Redis Cluster (3 masters, 3 replicas) through iovalkey', () => {
  beforeAll(() => clusterKind.cluster(), 60_000);
  afterAll(() => clusterKind.stop());

  describePermitContract(iovalkeyClusterPermitKind, true);
});
