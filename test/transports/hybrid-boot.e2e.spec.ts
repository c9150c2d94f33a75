import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  ClientProxyFactory,
  MessagePattern,
  Payload,
  Transport,
  type MicroserviceOptions,
} from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import { LockModule, WithLock } from '../../lib/index.js';
import { freePort, startRedisServer } from '../support/redis-server.js';
import { uniquePrefix } from '../support/stores.js';

@Controller()
class EarlyOrders {
  @MessagePattern('reserve')
  @WithLock('order:<orderId>')
  reserve(@Payload('orderId') orderId: string): string {
    return `reserved ${orderId}`;
  }
}

/**
 * Nest's own order for a hybrid app starts the microservices before `listen()`, which initialises the modules:
 * a message that comes in between must be served, not failed with LockNotReadyError.
 */
describe('@WithLock on a microservice started before its HTTP app listens', () => {
  it('serves a message that comes between startAllMicroservices() and listen()', async () => {
    const redis = await startRedisServer();
    @Module({
      imports: [LockModule.forRoot({ redis: redis.url, keyPrefix: uniquePrefix() })],
      controllers: [EarlyOrders],
    })
    class EarlyModule {}
    const app = await NestFactory.create(EarlyModule, { logger: false, abortOnError: false });
    const connection = { transport: Transport.TCP, options: { host: '127.0.0.1', port: await freePort() } } as const;
    app.connectMicroservice<MicroserviceOptions>(connection);
    const client = ClientProxyFactory.create(connection);
    try {
      await app.startAllMicroservices();
      await client.connect();
      await expect(lastValueFrom(client.send('reserve', { orderId: 'early' }))).resolves.toBe('reserved early');
      await app.listen(0, '127.0.0.1');
      await expect(lastValueFrom(client.send('reserve', { orderId: 'later' }))).resolves.toBe('reserved later');
    } finally {
      await client.close();
      await app.close();
      await redis.stop();
    }
  });
});
