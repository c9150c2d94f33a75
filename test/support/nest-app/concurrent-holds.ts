import { randomUUID } from 'node:crypto';

/** How long the holds wait for the others' answers before they let go anyway (then the test's counts fail). */
const ANSWERS_WAIT_MS = 30_000;

/**
 * Sends `count` holds of `productId` at once to the inventory fixture, each held until a gate opens; the gate
 * opens once all but one are answered, so the one inside holds the lock while every other request arrives,
 * however slowly a busy machine serves them. Resolves with every response.
 */
export async function concurrentHolds(url: string, productId: string, count: number): Promise<Response[]> {
  const gate = `holds-${randomUUID()}`;
  let answered = 0;
  let allButOne!: () => void;
  const othersAnswered = new Promise<void>((resolve) => (allButOne = resolve));
  const requests = Array.from({ length: count }, async () => {
    const response = await fetch(`${url}/inventory/${productId}/hold?gate=${gate}`, { method: 'POST' });
    if (++answered === count - 1) allButOne();
    return response;
  });
  const timer = setTimeout(allButOne, ANSWERS_WAIT_MS);
  await othersAnswered;
  clearTimeout(timer);
  await fetch(`${url}/inventory/gates/${gate}/open`, { method: 'POST' });
  return Promise.all(requests);
}
