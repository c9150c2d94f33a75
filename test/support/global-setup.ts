// Jest loads global setup through require(), which resolves no '.js' alias; hence the bare specifier.
import { startRedisServer, type RedisServerHandle } from './redis-server';

declare global {
  var __nestjsLockRedis: RedisServerHandle | undefined;
}

/**
 * Starts the redis-server that test files share (unless REDIS_URL names one) and hands its URL to the
 * workers through REDIS_TEST_URL. Files that stop or restart a server start their own.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.REDIS_URL) {
    process.env.REDIS_TEST_URL = process.env.REDIS_URL;
    return;
  }
  globalThis.__nestjsLockRedis = await startRedisServer();
  process.env.REDIS_TEST_URL = globalThis.__nestjsLockRedis.url;
}
