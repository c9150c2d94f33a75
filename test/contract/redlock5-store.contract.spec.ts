import { redlock5Kind, redlockServers } from '../support/stores.js';
import { describeStoreContract } from './lock-store.contract.js';

beforeAll(() => redlockServers.servers(5));
afterAll(() => redlockServers.stop());

describeStoreContract(redlock5Kind);
