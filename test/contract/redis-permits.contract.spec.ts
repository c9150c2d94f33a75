import { redisPermitKind } from '../support/permit-stores.js';
import { describePermitContract } from './permit-store.contract.js';

describePermitContract(redisPermitKind, true);
