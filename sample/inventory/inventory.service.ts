import { Inject, Injectable, UnprocessableEntityException } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { SampleConfig } from '../config/sample-config.js';
import { STORAGE, type Storage } from '../storage/storage.js';

/** A confirmed purchase. */
export interface Sale {
  /** Random per sale: a replayed answer carries the id of the sale it replays. */
  readonly id: string;
  readonly productId: string;
  /** Units left after this sale. */
  readonly left: number;
  /** The instance that sold it. */
  readonly instance: string;
  /** When this sale's read-modify-write began and ended, in epoch ms (the demo measures hand-offs with them). */
  readonly startedAt: number;
  readonly finishedAt: number;
}

const stockKey = (productId: string): string => `stock:${productId}`;
const now = (): number => performance.timeOrigin + performance.now();

/**
 * Stock kept as a plain number, changed by read-modify-write: correct only while no two writers of one
 * product overlap, which is what `@WithLock('inventory:<productId>')` on the callers guarantees.
 */
@Injectable()
export class InventoryService {
  constructor(
    @Inject(STORAGE) private readonly storage: Storage,
    private readonly config: SampleConfig,
  ) {}

  async stock(productId: string): Promise<number> {
    return Number((await this.storage.get(stockKey(productId))) ?? 0);
  }

  async restock(productId: string, stock: number): Promise<void> {
    await this.storage.set({ [stockKey(productId)]: String(stock) });
  }

  /** Sells one unit. @throws UnprocessableEntityException (422) when none is left */
  async purchase(productId: string): Promise<Sale> {
    const startedAt = now();
    const stock = await this.stock(productId);
    if (stock <= 0) throw new UnprocessableEntityException(`Product "${productId}" is out of stock.`);
    // two unguarded buyers can both read the same stock above and both write it minus one: an oversell
    await this.storage.set({ [stockKey(productId)]: String(stock - 1) });
    return {
      id: randomUUID(),
      productId,
      left: stock - 1,
      instance: this.config.instanceId,
      startedAt,
      finishedAt: now(),
    };
  }
}
