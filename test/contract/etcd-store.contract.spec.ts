import { etcdKind } from '../support/stores.js';
import { describeStoreContract } from './lock-store.contract.js';

describe('on a local etcd cluster (3 members)', () => {
  beforeAll(() => etcdKind.cluster(), 60_000);
  afterAll(() => etcdKind.stop());

  describeStoreContract(etcdKind);
});
