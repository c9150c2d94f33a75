import { nodeRedisPermitKind } from '../support/client-stores.js';
import { describePermitContract } from './permit-store.contract.js';

describePermitContract(nodeRedisPermitKind(6), true);
