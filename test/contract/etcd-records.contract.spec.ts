import { etcdKind } from '../support/stores.js';
import { describeResponseRecords } from './response-records.contract.js';

describe('on a 3-member etcd cluster', () => {
  beforeAll(() => etcdKind.cluster(), 90_000);
  afterAll(() => etcdKind.stop());

  describeResponseRecords(etcdKind);
});
