import 'reflect-metadata';
import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { LockManager, LockModule, LockService } from '../../../lib/index.js';
import { coalesceWrites, MOST_COMMANDS_PER_WRITE } from '../../../lib/stores/redis/coalesced-writes.js';
import { RedlockStore } from '../../../lib/stores/redlock/redlock.store.js';
import { startRedisServer, type RedisServerHandle } from '../../support/redis-server.js';

/** Acquisitions started in one tick, each on its own key. */
const BURST = 256;
/**
 * Reads the server may make of one burst: the commands of one tick come in writes of
 * {@link MOST_COMMANDS_PER_WRITE} (a few kB each), a read each at most, and the first command alone (written at
 * once on an idle connection). Written one by one, the commands cost a read each, less those the server finds
 * already waiting when it is slower than the client (a loaded machine): 126 to 187 of 256 when measured.
 */
const READS_OF_ONE_WRITE = Math.ceil(BURST / MOST_COMMANDS_PER_WRITE) + 2;

let servers: RedisServerHandle[];
let admins: Redis[];

beforeAll(async () => {
  servers = await Promise.all([startRedisServer(), startRedisServer(), startRedisServer()]);
  admins = servers.map((server) => new Redis(server.url));
});

afterAll(async () => {
  await Promise.all(admins.map((admin) => admin.quit()));
  await Promise.all(servers.map((server) => server.stop()));
});

/** How many reads the server behind `admin` has made from its clients' sockets (INFO stats). */
async function readsOf(admin: Redis): Promise<number> {
  const stats = await admin.info('stats');
  return Number(/^total_reads_processed:(\d+)/m.exec(stats)?.[1]);
}

/**
 * The reads each server made while `burst` ran, not counting the INFO commands that measure them (one read
 * each, on the admin connections).
 */
async function readsDuring(burst: () => Promise<unknown>): Promise<number[]> {
  const before = await Promise.all(admins.map(readsOf));
  await burst();
  const after = await Promise.all(admins.map(readsOf));
  return after.map((reads, index) => reads - before[index] - 1);
}

const keys = Array.from({ length: BURST }, (_, index) => `sku:${index}`);

describe('connections the store opens', () => {
  let app: INestApplicationContext | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('send the commands of one tick to Redis in few writes', async () => {
    @Module({ imports: [LockModule.forRoot({ redis: servers[0].url })] })
    class OwnClientModule {}
    app = await NestFactory.createApplicationContext(OwnClientModule, { logger: false });
    const locks = app.get(LockService);
    // connected and scripts loaded before the burst is counted
    await (await locks.acquire('warm-up', { autoRenew: false })).release();

    let held: Awaited<ReturnType<LockService['acquire']>>[] = [];
    const [acquireReads] = await readsDuring(async () => {
      held = await Promise.all(keys.map((key) => locks.acquire(key, { autoRenew: false })));
    });
    const [releaseReads] = await readsDuring(() => Promise.all(held.map((lock) => lock.release())));

    expect(new Set(held.map((lock) => lock.key)).size).toBe(BURST);
    expect(acquireReads).toBeLessThanOrEqual(READS_OF_ONE_WRITE);
    expect(releaseReads).toBeLessThanOrEqual(READS_OF_ONE_WRITE);
  });

  it('send the commands of one tick to each Redlock node in few writes', async () => {
    const manager = new LockManager({
      store: new RedlockStore({ nodes: servers.map((server) => server.url), timeout: 2000 }),
    });
    try {
      await (await manager.acquire('warm-up', { autoRenew: false })).release();
      let held: Awaited<ReturnType<LockManager['acquire']>>[] = [];
      const reads = await readsDuring(async () => {
        held = await Promise.all(keys.map((key) => manager.acquire(key, { autoRenew: false })));
      });
      await Promise.all(held.map((lock) => lock.release()));
      for (const nodeReads of reads) expect(nodeReads).toBeLessThanOrEqual(READS_OF_ONE_WRITE);
    } finally {
      await manager.close();
    }
  });

  it("leave a client of the user's own as it is", async () => {
    const client = new Redis(servers[0].url);
    @Module({ imports: [LockModule.forRoot({ redis: client })] })
    class GivenClientModule {}
    app = await NestFactory.createApplicationContext(GivenClientModule, { logger: false });
    await (await app.get(LockService).acquire('sku:1', { autoRenew: false })).release();
    expect(Object.hasOwn(client, 'sendCommand')).toBe(false);
    await app.close();
    app = undefined;
    await client.quit();
  });

  it('write a command on an idle connection at once, and hold back those sent while replies are awaited', async () => {
    const client = new Redis(servers[0].url);
    coalesceWrites(client);
    try {
      await client.ping();
      const socket = client.stream;
      // a lone command (an uncontended acquire) must not wait for the rest of its tick
      const lone = client.get('sku:idle');
      expect(socket.writableCorked).toBe(0);
      // a second command while the first awaits its reply joins this tick's write
      const second = client.get('sku:busy');
      expect(socket.writableCorked).toBe(1);
      await Promise.all([lone, second]);
      expect(socket.writableCorked).toBe(0);
    } finally {
      await client.quit();
    }
  });

  it('write a full batch at once, so that the server starts on it while the tick goes on', async () => {
    const client = new Redis(servers[0].url);
    coalesceWrites(client);
    try {
      await client.ping();
      const socket = client.stream;
      const replies = [client.get('sku:lone')];
      for (let sent = 1; sent < MOST_COMMANDS_PER_WRITE; sent++) replies.push(client.get(`sku:${sent}`));
      expect(socket.writableCorked).toBe(1);
      // the batch is full: it goes out now, not at the end of the tick
      replies.push(client.get('sku:last-of-batch'));
      expect(socket.writableCorked).toBe(0);
      // the next command starts the next batch
      replies.push(client.get('sku:next-batch'));
      expect(socket.writableCorked).toBe(1);
      await Promise.all(replies);
      expect(socket.writableCorked).toBe(0);
    } finally {
      await client.quit();
    }
  });
});
