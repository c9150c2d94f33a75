import { redisKind } from '../support/stores.js';
import { describeStoreContract } from './lock-store.contract.js';

describeStoreContract(redisKind);
