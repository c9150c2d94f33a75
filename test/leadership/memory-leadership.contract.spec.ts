import { memoryKind } from '../support/stores.js';
import { describeLeadership } from './leadership.contract.js';

describeLeadership(memoryKind);
