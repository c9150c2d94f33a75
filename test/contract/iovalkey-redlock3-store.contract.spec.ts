import { iovalkeyRedlockKind } from '../support/client-stores.js';
import { redlockServers } from '../support/stores.js';
import { describeStoreContract } from './lock-store.contract.js';

beforeAll(() => redlockServers.servers(3));
afterAll(() => redlockServers.stop());

describeStoreContract(iovalkeyRedlockKind(3));
