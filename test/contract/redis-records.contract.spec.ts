import { redisKind } from '../support/stores.js';
import { describeResponseRecords } from './response-records.contract.js';

describeResponseRecords(redisKind);
