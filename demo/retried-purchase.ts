import { randomUUID } from 'node:crypto';
import type { Sale } from '../sample/inventory/inventory.service.js';

/** What one attempt of the retried purchase got back. */
export interface RetryAttempt {
  /** HTTP status; 0 when the request failed without one. */
  readonly status: number;
  /** Whether the answer carried `Idempotent-Replayed: true`. */
  readonly replayed: boolean;
  /** A 409's `Retry-After`, in seconds, when it had one. */
  readonly retryAfter?: number;
  /** The sale's id, for a 201 (the first one's again, on a replay). */
  readonly saleId?: string;
}

/** Late retries, one per instance, once every attempt of the burst has its answer. */
const LATE_RETRIES_PER_INSTANCE = 1;
/** How often one client follows a 409's `Retry-After` before it gives up. */
const MAX_RETRIES_PER_CLIENT = 5;

/**
 * One buyer's purchase of `productId`, sent `burst` times at once with one `Idempotency-Key`, round-robin over
 * `urls` (a client that timed out and retried, a double click, a flaky network), each attempt that gets a 409
 * sent again after its `Retry-After`, as a client should; then one late retry per instance. Resolves with every
 * attempt's answer; `onAttempt` hears each as it arrives (for the progress line).
 */
export async function retriedPurchase(
  urls: readonly string[],
  productId: string,
  burst: number,
  onAttempt: (attempt: RetryAttempt) => void,
): Promise<RetryAttempt[]> {
  const key = randomUUID();
  const attempts: RetryAttempt[] = [];
  const send = async (url: string): Promise<RetryAttempt> => {
    const attempt = await purchase(`${url}/inventory/${productId}/purchase`, key);
    attempts.push(attempt);
    onAttempt(attempt);
    return attempt;
  };
  await Promise.all(
    Array.from({ length: burst }, async (_, index) => {
      const url = urls[index % urls.length];
      let attempt = await send(url);
      for (let retry = 0; attempt.retryAfter !== undefined && retry < MAX_RETRIES_PER_CLIENT; retry++) {
        const seconds = attempt.retryAfter;
        await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
        attempt = await send(url);
      }
    }),
  );
  for (const url of urls) {
    for (let i = 0; i < LATE_RETRIES_PER_INSTANCE; i++) await send(url);
  }
  return attempts;
}

async function purchase(url: string, idempotencyKey: string): Promise<RetryAttempt> {
  try {
    const response = await fetch(url, { method: 'POST', headers: { 'Idempotency-Key': `"${idempotencyKey}"` } });
    const body = (await response.json()) as unknown;
    const replayed = response.headers.get('idempotent-replayed') === 'true';
    if (response.status === 201) return { status: 201, replayed, saleId: (body as Sale).id };
    const retryAfter = Number(response.headers.get('retry-after') ?? NaN);
    return response.status === 409 && Number.isFinite(retryAfter) && retryAfter >= 0
      ? { status: 409, replayed, retryAfter }
      : { status: response.status, replayed };
  } catch {
    return { status: 0, replayed: false };
  }
}
