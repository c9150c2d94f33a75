import { memoryKind, redisKind } from '../support/stores.js';
import { describeStoreContract } from './lock-store.contract.js';

describeStoreContract(memoryKind);
describeStoreContract(redisKind);
