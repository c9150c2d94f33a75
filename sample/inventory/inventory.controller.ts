import { BadRequestException, Body, Controller, Get, Param, Post, Put } from '@nestjs/common';
import { Idempotent, WithLock } from 'nestjs-lock';
import { InventoryService, type Sale } from './inventory.service.js';

/**
 * Buying and restocking one product take its lock, `inventory:<productId>` (the route param), so their
 * read-modify-writes of the stock never overlap, whichever instance serves them. A buyer waits up to
 * 3 s for its turn, then gets `409 Conflict` with `Retry-After`. Different products do not wait on
 * each other.
 *
 * A purchase is also `@Idempotent()`: a client that retries it with the same `Idempotency-Key` header (a
 * timeout, a double click) buys once. A retry that comes while the first still runs gets `409` with
 * `Retry-After`; one that comes later gets the first sale again, with `Idempotent-Replayed: true`.
 */
@Controller('inventory')
export class InventoryController {
  constructor(private readonly inventory: InventoryService) {}

  @Get(':productId')
  async stock(@Param('productId') productId: string): Promise<{ productId: string; stock: number }> {
    return { productId, stock: await this.inventory.stock(productId) };
  }

  @Put(':productId')
  @WithLock('inventory:<productId>', { wait: '3s' })
  async restock(
    @Param('productId') productId: string,
    @Body() body: { stock?: unknown },
  ): Promise<{ productId: string; stock: number }> {
    const stock = body?.stock;
    if (typeof stock !== 'number' || !Number.isSafeInteger(stock) || stock < 0) {
      throw new BadRequestException('"stock" must be a whole number, 0 or more.');
    }
    await this.inventory.restock(productId, stock);
    return { productId, stock };
  }

  @Post(':productId/purchase')
  @Idempotent()
  @WithLock('inventory:<productId>', { wait: '3s' })
  purchase(@Param('productId') productId: string): Promise<Sale> {
    return this.inventory.purchase(productId);
  }
}
