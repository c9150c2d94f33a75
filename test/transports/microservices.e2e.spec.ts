import { Injectable } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { RpcException } from '@nestjs/microservices';
import { LockInterceptor, type LockError, type LockErrorPayload } from '../../lib/index.js';
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

/** An application's own mapping: a busy key answers with its own shape, everything else as the module does. */
@Injectable()
class BusyAsTryAgain extends LockInterceptor {
  protected override async toRpcException(error: LockError, payload: LockErrorPayload | undefined): Promise<Error> {
    if (payload?.code !== 'LOCKED') return super.toRpcException(error, payload);
    return new RpcException({ status: 'try-again', after: payload.retryAfter });
  }
}

describe('a LockInterceptor subclass on a microservice', () => {
  it('replaces the RPC mapping of the module when registered with interceptor: false', async () => {
    const running = await startMicroservice(
      { kind: 'tcp' },
      { redis: testRedisUrl(), keyPrefix: uniquePrefix(), interceptor: false },
      [{ provide: APP_INTERCEPTOR, useClass: BusyAsTryAgain }],
    );
    try {
      const first = running.send('purchase', { productId: 'p1' });
      await running.gate.reached(1);
      const second = await running.send('purchase', { productId: 'p1' }).catch((error: unknown) => error);
      running.gate.open();

      expect(second).toEqual({ status: 'try-again', after: expect.any(Number) });
      expect(await first).toEqual({ bought: 'p1' });
      expect(running.logger.errors()).toEqual([]);
    } finally {
      await running.close();
    }
  });
});
