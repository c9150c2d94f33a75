import { clusterKind, etcdKind, memoryKind, redisKind, redlock3Kind, redlockServers } from '../support/stores.js';
import { describeLeadership } from './leadership.contract.js';

beforeAll(() => redlockServers.servers(3));
afterAll(() => redlockServers.stop());

describeLeadership(memoryKind);
describeLeadership(redisKind);
describeLeadership(redlock3Kind);

describe('on a local Redis Cluster (3 masters, 3 replicas)', () => {
  beforeAll(() => clusterKind.cluster(), 60_000);
  afterAll(() => clusterKind.stop());

  describeLeadership(clusterKind);
});

describe('on a local etcd cluster (3 members)', () => {
  beforeAll(() => etcdKind.cluster(), 60_000);
  afterAll(() => etcdKind.stop());

  describeLeadership(etcdKind);
});
