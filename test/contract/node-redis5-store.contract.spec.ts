import { nodeRedisKind } from '../support/node-redis-stores.js';
import { describeStoreContract } from './lock-store.contract.js';

describeStoreContract(nodeRedisKind(5));
