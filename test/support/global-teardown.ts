/** Stops the shared redis-server that global-setup started. */
export default async function globalTeardown(): Promise<void> {
  await globalThis.__nestjsLockRedis?.stop();
}
