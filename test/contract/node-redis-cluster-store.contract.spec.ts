import { describeListingContract } from '../admin/lock-listing.contract.js';
import { nodeRedisClusterKind } from '../support/client-stores.js';
import { clusterKind } from '../support/stores.js';
import { describeStoreContract } from './lock-store.contract.js';

describe('on a local Redis Cluster (3 masters, 3 replicas) through node-redis createCluster()', () => {
  beforeAll(() => clusterKind.cluster(), 60_000);
  afterAll(() => clusterKind.stop());

  describeStoreContract(nodeRedisClusterKind(6));
  describeListingContract(nodeRedisClusterKind(6));
  describeStoreContract(nodeRedisClusterKind(5));
});
