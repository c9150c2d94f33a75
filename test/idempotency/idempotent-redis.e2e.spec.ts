import { redisKind } from '../support/stores.js';
import { describeIdempotency } from './idempotency-cases.js';

describeIdempotency(redisKind);
