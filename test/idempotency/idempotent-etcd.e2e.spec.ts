import { etcdKind } from '../support/stores.js';
import { describeIdempotency } from './idempotency-cases.js';

beforeAll(() => etcdKind.cluster(), 90_000);
afterAll(() => etcdKind.stop());

describeIdempotency(etcdKind);
