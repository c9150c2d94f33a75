import { clusterKind } from '../support/stores.js';
import { describeIdempotency } from './idempotency-cases.js';

afterAll(() => clusterKind.stop());

describeIdempotency(clusterKind);
