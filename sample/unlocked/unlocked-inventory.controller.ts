import { Body, Controller, Get, Param, Post, Put } from '@nestjs/common';
import { InventoryService, type Sale } from '../inventory/inventory.service.js';

/** The demo's comparison run only: {@link InventoryController} without `@WithLock` and `@Idempotent()`. */
@Controller('inventory')
export class UnlockedInventoryController {
  constructor(private readonly inventory: InventoryService) {}

  @Get(':productId')
  async stock(@Param('productId') productId: string): Promise<{ productId: string; stock: number }> {
    return { productId, stock: await this.inventory.stock(productId) };
  }

  @Put(':productId')
  async restock(@Param('productId') productId: string, @Body() body: { stock: number }): Promise<{ stock: number }> {
    await this.inventory.restock(productId, body.stock);
    return { stock: body.stock };
  }

  @Post(':productId/purchase')
  purchase(@Param('productId') productId: string): Promise<Sale> {
    return this.inventory.purchase(productId);
  }
}
