import { Controller, Injectable, Module, Param, Post, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LockModule, LockService, WithLock } from '../../lib/index.js';

@Injectable()
class Reservations {
  constructor(private readonly locks: LockService) {}

  /** Not an HTTP handler: `<productId>` is its own argument, whatever request it runs in. */
  @WithLock('inventory:<productId>')
  async reserve(productId: string): Promise<{ reserved: string; locked?: string }> {
    return { reserved: productId, locked: this.locks.current()?.key };
  }
}

@Controller('inventory')
class ReservationsController {
  constructor(private readonly reservations: Reservations) {}

  @Post(':productId/reserve-instead/:otherId')
  async reserveOther(@Param('productId') _productId: string, @Param('otherId') otherId: string) {
    return this.reservations.reserve(otherId);
  }
}

describe('@WithLock on a provider method called from an HTTP handler', () => {
  let app: INestApplication;

  beforeAll(async () => {
    @Module({ imports: [LockModule.forRoot()], controllers: [ReservationsController], providers: [Reservations] })
    class AppModule {}
    app = await NestFactory.create(AppModule, { logger: false });
    await app.listen(0, '127.0.0.1');
  });

  afterAll(() => app.close());

  it("locks the key of the method's own argument, not the request's route param of the same name", async () => {
    const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    const response = await fetch(`${url}/inventory/p1/reserve-instead/p2`, { method: 'POST' });
    expect(await response.json()).toEqual({ reserved: 'p2', locked: 'inventory:p2' });
  });
});
