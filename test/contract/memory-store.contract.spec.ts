import { memoryKind } from '../support/stores.js';
import { describeStoreContract } from './lock-store.contract.js';

describeStoreContract(memoryKind);
