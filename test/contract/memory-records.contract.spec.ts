import { memoryKind } from '../support/stores.js';
import { describeResponseRecords } from './response-records.contract.js';

describeResponseRecords(memoryKind);
