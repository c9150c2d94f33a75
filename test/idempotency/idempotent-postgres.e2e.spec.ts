import { postgresKind } from '../support/stores.js';
import { describeIdempotency } from './idempotency-cases.js';

beforeAll(() => postgresKind.server(), 60_000);
afterAll(() => postgresKind.stop());

describeIdempotency(postgresKind);
