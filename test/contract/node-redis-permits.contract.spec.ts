import { nodeRedisPermitKind } from '../support/node-redis-stores.js';
import { describePermitContract } from './permit-store.contract.js';

describePermitContract(nodeRedisPermitKind(6), true);
