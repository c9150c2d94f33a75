import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { blockEventLoop, pauseServer, sleepServer } from './faults.js';
import { startRedisServer, type RedisServerHandle } from './redis-server.js';

describe('server and process faults', () => {
  // Its own server: pausing or sleeping the shared one would stall other suites.
  let server: RedisServerHandle;
  let redis: Redis;

  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url);
  });

  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });

  it('pauseServer holds every command until the pause runs out', async () => {
    await redis.ping();
    const started = performance.now();
    await pauseServer(server.url, 300);
    await redis.ping();
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('pauseServer in WRITE mode holds writes but lets reads through', async () => {
    const started = performance.now();
    await pauseServer(server.url, 1500, 'WRITE');
    // a write sent first is still held when a read sent after it on another connection has its answer: judged
    // by order, not by a time budget a loaded machine could spend on scheduling alone
    const reader = redis.duplicate();
    let written = false;
    const write = redis.set('harness:faults:write', '1').then(() => (written = true));
    await reader.get('harness:faults:read');
    expect(written).toBe(false);
    reader.disconnect();
    await write;
    expect(performance.now() - started).toBeGreaterThanOrEqual(1490);
  });

  it('sleepServer resolves once the server is asleep and awake once it answers again', async () => {
    await redis.ping();
    const started = performance.now();
    const sleep = await sleepServer(server.url, 0.5);
    const ping = redis.ping().then(() => performance.now() - started);
    await sleep.awake;
    const awokeAfter = performance.now() - started;
    expect(awokeAfter).toBeGreaterThanOrEqual(490);
    expect(await ping).toBeGreaterThanOrEqual(490);
  });

  it('sleepServer rejects when the server refuses DEBUG', async () => {
    const locked = await startRedisServer(['--enable-debug-command', 'no']);
    await expect(sleepServer(locked.url, 0.1)).rejects.toThrow(/DEBUG/);
    await locked.stop();
  });

  it('blockEventLoop delays a timer that was due meanwhile', async () => {
    const started = performance.now();
    const fired = new Promise<number>((resolve) => setTimeout(() => resolve(performance.now() - started), 0));
    blockEventLoop(100);
    expect(performance.now() - started).toBeGreaterThanOrEqual(100);
    expect(await fired).toBeGreaterThanOrEqual(100);
  });
});
