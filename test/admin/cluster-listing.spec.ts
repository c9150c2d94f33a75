import { clusterKind } from '../support/stores.js';
import { describeListingContract } from './lock-listing.contract.js';

describe('on a local Redis Cluster (3 masters, 3 replicas)', () => {
  beforeAll(() => clusterKind.cluster(), 60_000);
  afterAll(() => clusterKind.stop());

  describeListingContract(clusterKind);
});
