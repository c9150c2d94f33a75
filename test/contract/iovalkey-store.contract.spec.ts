import { iovalkeyKind } from '../support/client-stores.js';
import { describeStoreContract } from './lock-store.contract.js';

describeStoreContract(iovalkeyKind);
