// Jest loads global setup through require(), which resolves no '.js' alias; hence the bare specifier.
import { startRedisServer, type RedisServerHandle } from './redis-server';

declare global {
  var __nestjsLockRedis: RedisServerHandle[] | undefined;
}

/**
 * Starts one redis-server per Jest worker (unless REDIS_URL names one for all) and hands worker `n` its URL
 * through REDIS_TEST_URL_<n>, which `testRedisUrl()` reads: files running at the same time never share a
 * server, so one file's load or pause cannot slow another's. Files that stop or restart a server start
 * their own.
 */
export default async function globalSetup(globalConfig: { maxWorkers: number }): Promise<void> {
  const workers = globalConfig.maxWorkers;
  if (process.env.REDIS_URL) {
    for (let worker = 1; worker <= workers; worker++) process.env[`REDIS_TEST_URL_${worker}`] = process.env.REDIS_URL;
    return;
  }
  globalThis.__nestjsLockRedis = await Promise.all(Array.from({ length: workers }, () => startRedisServer()));
  globalThis.__nestjsLockRedis.forEach((server, index) => {
    process.env[`REDIS_TEST_URL_${index + 1}`] = server.url;
  });
}
