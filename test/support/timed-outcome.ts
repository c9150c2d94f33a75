import { performance } from 'node:perf_hooks';

/** What `operation` ended with (its error, or `{ resolved: value }`) and how long it took, in ms. */
export async function failureOf(operation: () => Promise<unknown>): Promise<{ error: unknown; took: number }> {
  const started = performance.now();
  const error = await operation().then(
    (value: unknown) => ({ resolved: value }),
    (caught: unknown) => caught,
  );
  return { error, took: performance.now() - started };
}
