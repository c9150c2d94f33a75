import { etcdKind } from '../support/stores.js';
import { describeLeadership } from './leadership.contract.js';

describe('on a local etcd cluster (3 members)', () => {
  beforeAll(() => etcdKind.cluster(), 60_000);
  afterAll(() => etcdKind.stop());

  describeLeadership(etcdKind);
});
