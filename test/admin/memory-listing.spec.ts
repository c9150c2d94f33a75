import { memoryKind } from '../support/stores.js';
import { describeListingContract } from './lock-listing.contract.js';

describeListingContract(memoryKind);
