/** Stops the redis-servers that global-setup started, one per worker. */
export default async function globalTeardown(): Promise<void> {
  await Promise.all((globalThis.__nestjsLockRedis ?? []).map((server) => server.stop()));
}
