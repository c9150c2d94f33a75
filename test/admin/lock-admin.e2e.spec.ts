import { Injectable, Module, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { LockModule, LockService, type LockModuleOptions } from '../../lib/index.js';
import { LockAdminModule } from '../../lib/admin.js';
import type { LockAdminOptions } from '../../lib/admin.js';
import type { LockLostError } from '../../lib/errors/lock-lost.error.js';
import { startApp, type Platform } from '../support/nest-app/create-app.js';
import { etcdKind, postgresKind, redlockServers, testRedisUrl, uniquePrefix } from '../support/stores.js';

/** A guard that lets through requests with the bearer token `s3cret`. */
@Injectable()
class BearerGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return request.headers.authorization === 'Bearer s3cret';
  }
}

/** Where the application keeps its locks: the module's store option, and the servers behind it. */
interface AdminStore {
  readonly name: string;
  /** Whether the store has semaphores and readers-writer locks. */
  readonly permits: boolean;
  connection(): Promise<Partial<LockModuleOptions>>;
  stop?(): Promise<void>;
}

const redisStore: AdminStore = { name: 'Redis', permits: true, connection: async () => ({ redis: testRedisUrl() }) };

/** An application with LockModule on `store` (the test Redis by default) and the admin module with `options`. */
async function startAdminApp(platform: Platform, options: LockAdminOptions, store: AdminStore = redisStore) {
  const connection = await store.connection();
  @Module({
    imports: [LockModule.forRoot({ ...connection, keyPrefix: uniquePrefix() }), LockAdminModule.forRoot(options)],
  })
  class AdminAppModule {}
  const { app, url } = await startApp(platform, AdminAppModule);
  return { app, url, locks: app.get(LockService) };
}

describe.each<Platform>(['express', 'fastify'])('LockAdminModule on %s', (platform) => {
  let running: Awaited<ReturnType<typeof startAdminApp>> | undefined;

  afterEach(async () => {
    await running?.app.close();
    running = undefined;
  });

  describeJsonApi(
    platform,
    redisStore,
    () => running,
    (started) => (running = started),
  );

  it('puts every route behind the guard', async () => {
    running = await startAdminApp(platform, { guard: BearerGuard });
    expect((await fetch(`${running.url}/locks`)).status).toBe(403);
    expect((await fetch(`${running.url}/locks/api/locks`)).status).toBe(403);
    const allowed = await fetch(`${running.url}/locks/api/locks`, { headers: { authorization: 'Bearer s3cret' } });
    expect(allowed.status).toBe(200);
  });

  it('answers pages of at most limit locks, and 400 naming the cursor for one no page returned', async () => {
    running = await startAdminApp(platform, {});
    const { locks, url } = running;
    const held = await Promise.all([1, 2, 3].map((index) => locks.acquire(`job:${index}`, { ttl: 30_000 })));
    try {
      const page = (await (await fetch(`${url}/locks/api/locks?limit=1`)).json()) as {
        locks: unknown[];
        cursor?: string;
      };
      expect(page.locks.length).toBeLessThanOrEqual(1);
      expect(page.cursor).toBeDefined();
      const refused = await fetch(`${url}/locks/api/locks?cursor=garbage`);
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { message: string }).message).toContain('"cursor"');
    } finally {
      await Promise.all(held.map((lock) => lock.release()));
    }
  });

  it('serves the page as HTML with a strict content policy and no release button when release is off', async () => {
    running = await startAdminApp(platform, {});
    const response = await fetch(`${running.url}/locks`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await response.text();
    expect(html).toContain('&#34;forceRelease&#34;:false');
    expect(html).not.toMatch(/<(script|link)[^>]+src=/);
  });
});

type AdminApp = Awaited<ReturnType<typeof startAdminApp>>;

/**
 * The JSON API over `store`: a listing without tokens, release refused with 403 by default, and a forced
 * release (when allowed) that the holder hears as `revoked`, with a higher fence after it.
 */
function describeJsonApi(
  platform: Platform,
  store: AdminStore,
  running: () => AdminApp | undefined,
  setRunning: (app: AdminApp) => void,
): void {
  it('lists a held mutex (and a semaphore, where the store has permits) over JSON, with holders and no token', async () => {
    setRunning(await startAdminApp(platform, {}, store));
    const { locks, url } = running()!;
    const mutex = await locks.acquire('invoice:7', { ttl: 30_000, label: 'Invoices.send' });
    const permits = store.permits
      ? [
          await locks.acquire('pool', { ttl: 30_000, limit: 2, label: 'a' }),
          await locks.acquire('pool', { ttl: 30_000, limit: 2, label: 'b' }),
        ]
      : [];
    try {
      const response = await fetch(`${url}/locks/api/locks`);
      expect(response.status).toBe(200);
      const text = await response.text();
      const { locks: listed } = JSON.parse(text) as { locks: Array<{ key: string; kind: string; holders: unknown[] }> };
      expect(listed.map((lock) => [lock.key, lock.kind, lock.holders.length]).sort()).toEqual([
        ['invoice:7', 'mutex', 1],
        ...(store.permits ? [['pool', 'semaphore', 2]] : []),
      ]);
      for (const lock of [mutex, ...permits]) expect(text).not.toContain(lock.token);
      const underInvoice = (await (await fetch(`${url}/locks/api/locks?prefix=invoice`)).json()) as {
        locks: unknown[];
      };
      expect(underInvoice.locks).toHaveLength(1);
      const one = await fetch(`${url}/locks/api/locks/${encodeURIComponent('invoice:7')}`);
      expect(await one.json()).toMatchObject({ key: 'invoice:7', holders: [{ label: 'Invoices.send' }] });
      expect((await fetch(`${url}/locks/api/locks/free`)).status).toBe(404);
    } finally {
      await Promise.all([mutex, ...permits].map((lock) => lock.release()));
    }
  });

  it('refuses a release with 403 unless forceRelease is on', async () => {
    setRunning(await startAdminApp(platform, {}, store));
    const lock = await running()!.locks.acquire('kept', { ttl: 30_000 });
    const response = await fetch(`${running()!.url}/locks/api/locks/kept/release`, {
      method: 'POST',
      headers: { 'x-lock-admin': 'release' },
    });
    expect(response.status).toBe(403);
    expect(await running()!.locks.isLocked('kept')).toBe(true);
    await lock.release();
  });

  it('force-releases when allowed: the holder hears revoked and the next fence is higher', async () => {
    setRunning(await startAdminApp(platform, { forceRelease: true, path: '/ops/locks' }, store));
    const lock = await running()!.locks.acquire('stuck', { ttl: 3000, fencing: true, autoRenew: true });
    const lost = new Promise<LockLostError>((resolve) =>
      lock.signal.addEventListener('abort', () => resolve(lock.signal.reason as LockLostError), { once: true }),
    );
    const without = await fetch(`${running()!.url}/ops/locks/api/locks/stuck/release`, { method: 'POST' });
    expect(without.status).toBe(403);
    const response = await fetch(`${running()!.url}/ops/locks/api/locks/stuck/release`, {
      method: 'POST',
      headers: { 'x-lock-admin': 'release' },
    });
    expect(response.status).toBe(200);
    const forced = (await response.json()) as { ended: number; fence: number };
    expect(forced.ended).toBe(1);
    expect((await lost).reason).toBe('revoked');
    const next = await running()!.locks.acquire('stuck', { ttl: 3000, fencing: true });
    expect(next.fence).toBeGreaterThan(forced.fence);
    expect(forced.fence).toBeGreaterThan(lock.fence as number);
    await next.release();
  });
}

describe.each<AdminStore>([
  { name: 'PostgreSQL', permits: true, connection: async () => ({ postgres: (await postgresKind.server()).url }) },
  {
    name: 'etcd',
    permits: false,
    connection: async () => ({ etcd: { hosts: (await etcdKind.cluster()).hosts } }),
  },
  {
    name: 'Redlock',
    permits: false,
    connection: async () => ({ redlock: { nodes: (await redlockServers.servers(3)).map((server) => server.url) } }),
  },
])('the JSON API of LockAdminModule on $name', (store) => {
  let running: AdminApp | undefined;

  afterEach(async () => {
    await running?.app.close();
    running = undefined;
  });

  describeJsonApi(
    'express',
    store,
    () => running,
    (started) => (running = started),
  );
});

afterAll(() => Promise.all([postgresKind.stop(), etcdKind.stop(), redlockServers.stop()]), 60_000);
