import {
  clusterKind,
  etcdKind,
  memoryKind,
  redisKind,
  redlock3Kind,
  redlock5Kind,
  redlockServers,
} from '../support/stores.js';
import { describeStoreContract } from './lock-store.contract.js';

beforeAll(() => redlockServers.servers(5));
afterAll(() => redlockServers.stop());

describeStoreContract(memoryKind);
describeStoreContract(redisKind);
describeStoreContract(redlock3Kind);
describeStoreContract(redlock5Kind);

describe('on a local Redis Cluster (3 masters, 3 replicas)', () => {
  beforeAll(() => clusterKind.cluster(), 60_000);
  afterAll(() => clusterKind.stop());

  describeStoreContract(clusterKind);
});

describe('on a local etcd cluster (3 members)', () => {
  beforeAll(() => etcdKind.cluster(), 60_000);
  afterAll(() => etcdKind.stop());

  describeStoreContract(etcdKind);
});
