import { redlock3Kind, redlockServers } from '../support/stores.js';
import { describeLeadership } from './leadership.contract.js';

beforeAll(() => redlockServers.servers(3));
afterAll(() => redlockServers.stop());

describeLeadership(redlock3Kind);
