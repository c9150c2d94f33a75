import { startNatsServer, type NatsServerHandle } from '../support/nats-server.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';
import {
  startMicroservice,
  type MicroserviceTransport,
  type RunningMicroservice,
} from './fixtures/microservice-app.js';

const LOCKED = {
  code: 'LOCKED',
  message: 'Resource "inventory:<productId>" is locked by another operation; retry later.',
  resource: 'inventory:<productId>',
  retryAfter: expect.any(Number),
};

describe.each(['tcp', 'nats'] as const)('@WithLock on a %s microservice', (kind) => {
  let nats: NatsServerHandle | undefined;
  let running: RunningMicroservice;

  beforeAll(async () => {
    if (kind === 'nats') nats = await startNatsServer();
  });

  afterAll(async () => {
    await nats?.stop();
  });

  beforeEach(async () => {
    const transport: MicroserviceTransport = nats ? { kind: 'nats', url: nats.url } : { kind: 'tcp' };
    running = await startMicroservice(transport, { redis: testRedisUrl(), keyPrefix: uniquePrefix() });
  });

  afterEach(async () => {
    await running.close();
  });

  it('fails the second of two concurrent requests on one key with the LOCKED payload as its error', async () => {
    const first = running.send('purchase', { productId: 'p1' });
    await running.gate.reached(1);

    const second = await running.send('purchase', { productId: 'p1' }).then(
      () => 'replied',
      (error: unknown) => error,
    );
    running.gate.open();

    expect(second).toEqual(LOCKED);
    expect((second as { retryAfter: number }).retryAfter).toBeGreaterThanOrEqual(1);
    expect(await first).toEqual({ bought: 'p1' });
    expect(running.gate.entered).toBe(1);
    expect(running.logger.errors()).toEqual([]);
  });
});
