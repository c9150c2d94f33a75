import { glidePermitKind } from '../support/client-stores.js';
import { describePermitContract } from './permit-store.contract.js';

describePermitContract(glidePermitKind, true);
