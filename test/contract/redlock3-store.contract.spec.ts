import { redlock3Kind, redlockServers } from '../support/stores.js';
import { describeStoreContract } from './lock-store.contract.js';

beforeAll(() => redlockServers.servers(3));
afterAll(() => redlockServers.stop());

describeStoreContract(redlock3Kind);
