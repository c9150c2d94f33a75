import { nodeRedisKind } from '../support/client-stores.js';
import { describeStoreContract } from './lock-store.contract.js';

describeStoreContract(nodeRedisKind(5));
