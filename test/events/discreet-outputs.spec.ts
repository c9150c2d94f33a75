import { once } from 'node:events';
import { inspect } from 'node:util';
import { Module, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  LockConfigurationError,
  LockManager,
  LockModule,
  LockStoreError,
  LockTelemetry,
  MemoryLockStore,
  RedisLockStore,
  type LockLogger,
  type LockModuleOptions,
} from '../../lib/index.js';
import type { AcquireRequest, AcquireResult } from '../../lib/store.js';
import { withKeyTemplate } from '../../lib/errors/lock.error.js';
import { resourceKeys } from '../../lib/stores/redis/resource-keys.js';
import { installOpenTelemetrySdk } from '../support/opentelemetry-sdk.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';

/** A key an attacker shaped to forge a log line: CR/LF, an ANSI escape that clears the screen, a fake entry. */
const FORGED = 'order:1\r\n[Nest] 1 - 01/01/2030, 00:00:00 ERROR [Auth] admin logged in\u001b[2J';

/** A logger that keeps every line it is given, by level. */
function recordingLogger(): LockLogger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    warn: (message) => void lines.push(message),
    error: (message) => void lines.push(message),
    debug: (message) => void lines.push(message),
    log: (message) => void lines.push(message),
  };
}

/** A memory store whose next acquire fails as a dropped connection would. */
class BrokenStore extends MemoryLockStore {
  broken = false;

  override async acquire(request: AcquireRequest): Promise<AcquireResult> {
    if (this.broken) throw new LockStoreError('acquire', request.key, new Error('ECONNRESET'));
    return super.acquire(request);
  }
}

describe('log lines about a key with control characters', () => {
  it('stay one line each, with the characters escaped where they name the key: a lost lease, a contention, a store failure', async () => {
    const logger = recordingLogger();
    const store = new BrokenStore();
    const locks = new LockManager({ store, logger, exposeResolvedKeys: true });
    try {
      const lock = await locks.acquire(FORGED, { ttl: 100, label: 'Orders.pay' });
      await expect(locks.acquire(FORGED)).rejects.toThrow();
      await once(lock.signal, 'abort');
      store.broken = true;
      await expect(locks.acquire(FORGED)).rejects.toBeInstanceOf(LockStoreError);

      expect(logger.lines).toHaveLength(3);
      for (const line of logger.lines) {
        expect(line).not.toMatch(/[\r\n\u001b]/);
        expect(line).toContain('order:1\\r\\n[Nest] 1');
        expect(line).toContain('\\u001b[2J');
      }
      expect(logger.lines[0]).toMatch(/^Lock "order:1.*" is held by another owner/);
      expect(logger.lines[1]).toMatch(/^Lock "order:1.*" was lost/);
      expect(logger.lines[2]).toMatch(/^Lock store failed to acquire "order:1.*": ECONNRESET$/);
    } finally {
      await locks.close();
    }
  });
});

describe('spans of a store failure', () => {
  let admin: Redis;
  let client: Redis;
  let otel: ReturnType<typeof installOpenTelemetrySdk>;
  let keyPrefix: string;

  beforeEach(() => {
    admin = new Redis(testRedisUrl());
    client = new Redis(testRedisUrl());
    otel = installOpenTelemetrySdk();
    keyPrefix = uniquePrefix();
  });

  afterEach(async () => {
    await otel.uninstall();
    await admin.quit();
    await client.quit();
  });

  it('carry neither the resolved key nor the Redis key it lives in, without resolvedKeys', async () => {
    const key = 'owner:alice@example.com';
    await admin.hset(resourceKeys(keyPrefix, key).lock, 'field', 'another feature');
    // the manager's messages may name keys; the spans still may not
    const locks = new LockManager({ store: new RedisLockStore({ client, keyPrefix }), exposeResolvedKeys: true });
    const telemetry = await LockTelemetry.attach(locks);
    try {
      const error = await locks.acquire(key, { metricKey: 'owner:<email>' }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(LockStoreError);
      expect((error as Error).message).toContain('alice@example.com');

      const [span] = (await otel.collectSpans()).ended('lock.acquire');
      expect(span.status.message).toBe(
        'Lock store failed to acquire "owner:<email>": WRONGTYPE: its lock key holds another type of value ' +
          '(a hash, where the store keeps a string); another part of the application uses this name: change keyPrefix or the key',
      );
      const exported = JSON.stringify([span.status, span.events, span.attributes]);
      expect(exported).not.toContain('alice');
      expect(exported).toContain('WRONGTYPE');
    } finally {
      telemetry?.detach();
      await locks.close();
      await admin.del(resourceKeys(keyPrefix, key).lock);
    }
  });
});

describe('a WRONGTYPE', () => {
  it('names exactly the Redis key that holds another type, not the lock or fence keys beside it, where keys may be named', async () => {
    const admin = new Redis(testRedisUrl());
    const keyPrefix = uniquePrefix();
    const keys = resourceKeys(keyPrefix, 'queue');
    // the key is held, so a waiting acquire joins the line, which another feature made a hash
    await admin.set(keys.lock, 'someone else', 'PX', 5000);
    await admin.hset(keys.line, 'field', 'another feature');
    const store = new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix, ownsClient: true });
    try {
      const request = {
        key: 'queue',
        token: 'x'.repeat(32),
        ttl: 1000,
        fencing: false,
        waiting: { again: false, ttl: 1000 },
      };
      const error = await store.acquire(request).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(LockStoreError);
      const { message, keyedDetail } = error as LockStoreError;
      expect(message).toBe(
        'Lock store failed to acquire: WRONGTYPE: the key of its waiting line holds another type of value ' +
          '(a hash, where the store keeps a list); another part of the application uses this name: change keyPrefix or the key',
      );
      expect(keyedDetail).toContain(
        `Redis key "${keys.line}" holds another type of value (a hash, where the store keeps a list)`,
      );
      expect(keyedDetail).not.toContain(`"${keys.lock}"`);
      expect(keyedDetail).not.toContain(`"${keys.fence}"`);
      expect(withKeyTemplate(error as LockStoreError, 'queue:<n>', true).message).toContain(keyedDetail);
    } finally {
      await store.close();
      await admin.del(keys.lock, keys.line);
      await admin.quit();
    }
  });
});

describe('a configuration error about a URL with credentials', () => {
  /** Everything Nest's logger was given while the application failed to start. */
  async function bootLog(options: LockModuleOptions): Promise<{ error: unknown; logged: string }> {
    const lines: string[] = [];
    const keep = (...parts: unknown[]) =>
      void lines.push(parts.map((part) => inspect(part, { depth: null })).join(' '));
    const logger: LoggerService = { log: keep, error: keep, warn: keep, debug: keep, verbose: keep, fatal: keep };
    @Module({ imports: [LockModule.forRoot(options)] })
    class AppModule {}
    const error = await NestFactory.createApplicationContext(AppModule, { logger, abortOnError: false }).catch(
      (caught: unknown) => caught,
    );
    return { error, logged: lines.join('\n') };
  }

  it.each<[string, LockModuleOptions]>([
    ['a valkey:// URL', { redis: 'valkey://admin:S3cr3t@db.internal:6379' }],
    [
      'a Redlock node URL of another scheme',
      { redlock: { nodes: ['http://admin:S3cr3t@a:1', 'redis://b', 'redis://c'] } },
    ],
    ['a URL under a misspelt option', { redisUrl: 'redis://admin:S3cr3t@db.internal:6379' } as LockModuleOptions],
    ['a URL without the colon of its scheme', { redis: 'redis//:S3cr3t@db.internal:6379' }],
    [
      'a Redlock node URL without the colon of its scheme',
      { redlock: { nodes: ['rediss//:S3cr3t@h:3', 'redis://b', 'redis://c'] } },
    ],
    ['a password with a space, which no URL parser takes', { redis: 'redis:/admin:S3 cr3t@db.internal:6379' }],
    ['an etcd member with credentials in it', { etcd: { hosts: 'admin:S3cr3t@etcd-0' } }],
  ])('never shows the password, in the error, its fields, or the log, for %s', async (_label, options) => {
    const { error, logged } = await bootLog(options);
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect((error as Error).message).toContain('***@');
    expect(inspect(error, { depth: null, showHidden: true })).not.toContain('S3cr3t');
    expect(logged).not.toContain('S3cr3t');
    const direct = await Test.createTestingModule({ imports: [LockModule.forRoot(options)] })
      .compile()
      .then((ref) => ref.init())
      .catch((caught: unknown) => caught);
    expect(inspect(direct, { depth: null, showHidden: true })).not.toContain('S3cr3t');
  });
});
