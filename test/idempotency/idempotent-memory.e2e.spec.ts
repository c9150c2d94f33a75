import { memoryKind } from '../support/stores.js';
import { describeIdempotency } from './idempotency-cases.js';

describeIdempotency(memoryKind);
