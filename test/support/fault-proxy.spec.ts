import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { Redis, type RedisOptions } from 'ioredis';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';
import { testRedisUrl } from './stores.js';

describe('startFaultProxy', () => {
  const target = testRedisUrl();
  let proxy: FaultProxy;
  let direct: Redis;
  const clients: Redis[] = [];

  const client = (options: RedisOptions = {}): Redis => {
    const redis = new Redis(proxy.url, { lazyConnect: true, ...options });
    redis.on('error', () => undefined);
    clients.push(redis);
    return redis;
  };

  beforeAll(() => {
    direct = new Redis(target);
  });

  beforeEach(async () => {
    proxy = await startFaultProxy(target);
  });

  afterEach(async () => {
    await Promise.all(
      clients.splice(0).map(async (redis) => {
        // disconnect() on a client that already ended arms a 2 s timer for a socket that is gone.
        if (redis.status === 'end') return;
        const ended = once(redis, 'end');
        redis.disconnect();
        await ended;
      }),
    );
    await proxy.close();
  });

  afterAll(() => direct.disconnect());

  it('forwards commands unchanged while no fault is set', async () => {
    const redis = client();
    await redis.connect();
    await redis.set('harness:proxy:plain', 'value');
    await expect(direct.get('harness:proxy:plain')).resolves.toBe('value');
    expect(proxy.connections).toBe(1);
    expect(proxy.url).toBe(`redis://127.0.0.1:${proxy.port}`);
  });

  it('accepts a host and port as target as well as a URL', async () => {
    const { port } = new URL(target);
    const other = await startFaultProxy({ port: Number(port) });
    const redis = new Redis(other.url);
    await expect(redis.ping()).resolves.toBe('PONG');
    redis.disconnect();
    await other.close();
  });

  it('delays a PING round trip by the latency in each direction', async () => {
    const redis = client();
    await redis.connect();
    proxy.latency(100);
    const started = performance.now();
    await redis.ping();
    expect(performance.now() - started).toBeGreaterThanOrEqual(200);
    proxy.heal();
    const healed = performance.now();
    await redis.ping();
    expect(performance.now() - healed).toBeLessThan(200);
  });

  it('keeps the order of chunks when the latency drops mid-stream', async () => {
    const redis = client();
    await redis.connect();
    await redis.del('harness:proxy:order');
    proxy.latency(80);
    const started = performance.now();
    const early = Array.from({ length: 20 }, () => redis.incr('harness:proxy:order'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    proxy.latency(0);
    const late = redis.incr('harness:proxy:order').then((count) => [count, performance.now() - started]);
    await expect(Promise.all(early)).resolves.toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const [count, elapsed] = await late;
    expect(count).toBe(21);
    expect(elapsed).toBeGreaterThanOrEqual(80);
  });

  it('holds a command in a blackhole until the client times out, then delivers it on heal', async () => {
    const redis = client({ commandTimeout: 200 });
    await redis.connect();
    await direct.del('harness:proxy:held');
    proxy.blackhole();
    await expect(redis.set('harness:proxy:held', 'late')).rejects.toThrow(/timed out/i);
    await expect(direct.get('harness:proxy:held')).resolves.toBeNull();
    proxy.heal();
    await expect(redis.ping()).resolves.toBe('PONG');
    await expect(direct.get('harness:proxy:held')).resolves.toBe('late');
  });

  it('cuts every connection so ioredis emits close and reconnects', async () => {
    const redis = client();
    await redis.connect();
    const closed = once(redis, 'close');
    proxy.cutAll();
    expect(proxy.connections).toBe(0);
    await closed;
    await once(redis, 'ready');
    await expect(redis.ping()).resolves.toBe('PONG');
    expect(proxy.connections).toBe(1);
  });

  it('cuts the connection carrying a marked request before the server sees it', async () => {
    const redis = client({ maxRetriesPerRequest: 0, retryStrategy: () => null });
    await redis.connect();
    await direct.del('harness:proxy:dropped', 'harness:proxy:other');
    await redis.set('harness:proxy:other', 'before');
    const cut = proxy.cutOn('harness:proxy:dropped', 'request');
    await expect(redis.set('harness:proxy:dropped', 'never')).rejects.toThrow();
    await cut;
    await expect(direct.get('harness:proxy:dropped')).resolves.toBeNull();
    await expect(direct.get('harness:proxy:other')).resolves.toBe('before');
  });

  it('cuts the connection carrying a marked request after the server ran it, losing only the reply', async () => {
    const redis = client({ maxRetriesPerRequest: 0, retryStrategy: () => null });
    await redis.connect();
    await direct.del('harness:proxy:ran');
    const cut = proxy.cutOn('harness:proxy:ran', 'reply');
    await expect(redis.set('harness:proxy:ran', 'applied')).rejects.toThrow();
    await cut;
    await expect(direct.get('harness:proxy:ran')).resolves.toBe('applied');
  });

  it('holds the replies after a marked request, which still runs, until heal delivers them', async () => {
    const redis = client({ commandTimeout: 200 });
    await redis.connect();
    await direct.del('harness:proxy:answer-held');
    const held = proxy.holdRepliesAfter('harness:proxy:answer-held');
    await expect(redis.set('harness:proxy:answer-held', 'applied')).rejects.toThrow(/timed out/i);
    await held;
    await expect(direct.get('harness:proxy:answer-held')).resolves.toBe('applied');
    await expect(redis.ping()).rejects.toThrow(/timed out/i);
    proxy.heal();
    await expect(redis.ping()).resolves.toBe('PONG');
  });

  it('cuts only once per call, and refuses a second cut while one is armed', async () => {
    const redis = client();
    await redis.connect();
    const cut = proxy.cutOn('harness:proxy:once', 'request');
    await expect(proxy.cutOn('harness:proxy:once', 'reply')).rejects.toThrow(/already armed/);
    await redis.set('harness:proxy:unmarked', '1');
    expect(proxy.connections).toBe(1);
    // ioredis sends the dropped command again once it has reconnected; the second time it goes through
    await expect(redis.set('harness:proxy:once', 'resent')).resolves.toBe('OK');
    await cut;
    await expect(direct.get('harness:proxy:once')).resolves.toBe('resent');
  });

  it('holds what one connection sends from a marked request on, while other connections go on', async () => {
    const held = client({ maxRetriesPerRequest: 0, retryStrategy: () => null, commandTimeout: 300 });
    const other = client();
    await Promise.all([held.connect(), other.connect()]);
    await direct.del('harness:proxy:held');
    const hold = proxy.holdOn('harness:proxy:held');
    await expect(proxy.holdOn('harness:proxy:held')).rejects.toThrow(/already armed/);
    await expect(held.set('harness:proxy:held', 'late')).rejects.toThrow(/timed out/i);
    await hold;
    await expect(other.ping()).resolves.toBe('PONG');
    await expect(direct.get('harness:proxy:held')).resolves.toBeNull();
    proxy.heal();
    // delivered once healed, in order, as TCP would after the partition
    await expect(held.get('harness:proxy:held')).resolves.toBe('late');
  });

  it('refuses new connections while open ones keep working', async () => {
    const open = client();
    await open.connect();
    await proxy.refuse(true);
    const refused = client({ retryStrategy: () => null });
    const [error] = await Promise.all([once(refused, 'error'), refused.connect().catch(() => undefined)]);
    expect(error).toEqual([expect.objectContaining({ code: 'ECONNREFUSED' })]);
    await expect(open.ping()).resolves.toBe('PONG');
    await proxy.refuse(false);
    const admitted = client();
    await admitted.connect();
    await expect(admitted.ping()).resolves.toBe('PONG');
    expect(proxy.connections).toBe(2);
  });

  it('counts a connection until the client closes it', async () => {
    const redis = client();
    await redis.connect();
    expect(proxy.connections).toBe(1);
    await redis.quit();
    // The proxy closes its side only after the server answered QUIT and hung up; nothing to await but the count.
    while (proxy.connections > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  });
});
