import { iovalkeyClusterKind } from '../support/client-stores.js';
import { clusterKind } from '../support/stores.js';
import { describeStoreContract } from './lock-store.contract.js';

describe('on a local Redis Cluster (3 masters, 3 replicas) through iovalkey', () => {
  beforeAll(() => clusterKind.cluster(), 60_000);
  afterAll(() => clusterKind.stop());

  describeStoreContract(iovalkeyClusterKind);
});
