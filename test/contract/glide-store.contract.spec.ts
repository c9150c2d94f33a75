import { glideKind } from '../support/client-stores.js';
import { describeStoreContract } from './lock-store.contract.js';

describeStoreContract(glideKind());
