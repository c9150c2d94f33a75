import { performance } from 'node:perf_hooks';
import type { Sale } from '../sample/inventory/inventory.service.js';

/** What one purchase request got back. */
export interface PurchaseOutcome {
  /** HTTP status; 0 when the request failed without one. */
  readonly status: number;
  /** When the request was sent, in epoch ms. */
  readonly sentAt: number;
  /** The sale, for a 201. */
  readonly sale?: Sale;
}

const now = (): number => performance.timeOrigin + performance.now();

/**
 * Fires `requests` purchases of `productId` at once, round-robin over `urls`, and resolves with every
 * outcome; `onOutcome` hears each as it arrives (for the progress line).
 */
export function purchaseBurst(
  urls: readonly string[],
  productId: string,
  requests: number,
  onOutcome: (outcome: PurchaseOutcome) => void,
): Promise<PurchaseOutcome[]> {
  return Promise.all(
    Array.from({ length: requests }, async (_, index) => {
      const outcome = await purchase(`${urls[index % urls.length]}/inventory/${productId}/purchase`);
      onOutcome(outcome);
      return outcome;
    }),
  );
}

async function purchase(url: string): Promise<PurchaseOutcome> {
  const sentAt = now();
  try {
    const response = await fetch(url, { method: 'POST' });
    const body = (await response.json()) as unknown;
    return response.status === 201 ? { status: 201, sentAt, sale: body as Sale } : { status: response.status, sentAt };
  } catch {
    return { status: 0, sentAt };
  }
}
