import { Module } from '@nestjs/common';
import { chromium, type Browser } from 'playwright-core';
import { LockModule, LockService } from '../../lib/index.js';
import { LockAdminModule } from '../../lib/admin.js';
import type { Lock } from '../../lib/core/lock.js';
import { createApp, startApp, type Platform } from '../support/nest-app/create-app.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';

/** Debian's chromium, as .ci/run installs it. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** An application with the page at `/locks` under the global prefix `api`, on a free port. */
async function startPrefixedApp(platform: Platform) {
  @Module({
    imports: [LockModule.forRoot({ redis: testRedisUrl(), keyPrefix: uniquePrefix() }), LockAdminModule.forRoot()],
  })
  class PrefixedPageModule {}
  const app = await createApp(platform, PrefixedPageModule);
  app.setGlobalPrefix('api');
  await app.listen(0, '127.0.0.1');
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1'), locks: app.get(LockService) };
}

/** Holds `count` locks `held:<n>` for a minute. */
function holdMany(locks: LockService, count: number): Promise<Lock[]> {
  return Promise.all(
    Array.from({ length: count }, (_unused, index) => locks.acquire(`held:${index}`, { ttl: 60_000 })),
  );
}

describe('the LockAdminModule page in a headless browser', () => {
  let browser: Browser;
  let app: Awaited<ReturnType<typeof startApp>>['app'];
  let url: string;
  let locks: LockService;

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    @Module({
      imports: [
        LockModule.forRoot({ redis: testRedisUrl(), keyPrefix: uniquePrefix() }),
        LockAdminModule.forRoot({ forceRelease: true }),
      ],
    })
    class PageAppModule {}
    ({ app, url } = await startApp('express', PageAppModule));
    locks = app.get(LockService);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('shows the held keys, escaped, updates after a new lock is taken, and never shows a token', async () => {
    const hostile = '<img src=x onerror="window.__pwned=1">';
    const first = await locks.acquire(hostile, { ttl: 60_000, label: '<b>Label</b>' });
    const page = await browser.newPage();
    try {
      await page.goto(`${url}/locks`);
      const keys = page.locator('#locks td.key');
      await keys.first().waitFor({ timeout: 20_000 });
      expect(await keys.allTextContents()).toEqual([hostile]);
      expect(await page.evaluate('window.__pwned')).toBeUndefined();
      expect(await page.locator('#locks img, #locks b').count()).toBe(0);
      await expect(page.locator('#locks button').count()).resolves.toBe(1);

      const second = await locks.acquire('orders:42', { ttl: 60_000 });
      await page.locator('#locks td.key', { hasText: 'orders:42' }).waitFor({ timeout: 20_000 });
      const html = await page.content();
      expect(html).not.toContain(first.token);
      expect(html).not.toContain(second.token);
      await second.release();
      await page.locator('#locks td.key', { hasText: 'orders:42' }).waitFor({ state: 'detached', timeout: 20_000 });
    } finally {
      await page.close();
      await first.release();
    }
  }, 60_000);

  describe.each<Platform>(['express', 'fastify'])('on %s under a global prefix', (platform) => {
    let prefixed: Awaited<ReturnType<typeof startPrefixedApp>>;
    let held: Lock[] = [];

    beforeAll(async () => {
      prefixed = await startPrefixedApp(platform);
    }, 60_000);

    afterEach(async () => {
      await Promise.all(held.map((lock) => lock.release()));
      held = [];
    });

    afterAll(async () => {
      await prefixed?.app.close();
    });

    /** Opens `path` of the app and waits until its table shows `rows` keys. */
    async function openWithRows(path: string, rows: number) {
      const page = await browser.newPage();
      await page.goto(`${prefixed.url}${path}`);
      // the table is drawn at once: its last row there, the count is final (the CSP forbids polling by eval)
      await page
        .locator('#locks td.key')
        .nth(rows - 1)
        .waitFor({ timeout: 30_000 });
      expect(await page.locator('#locks td.key').count()).toBe(rows);
      return page;
    }

    it('reads its API beside its own URL and follows the cursor past the first page', async () => {
      held = await holdMany(prefixed.locks, 130);
      const paths = platform === 'express' ? ['/api/locks', '/api/locks/'] : ['/api/locks'];
      for (const path of paths) {
        const page = await openWithRows(path, 130);
        try {
          expect(await page.locator('#status').textContent()).toBe('');
          expect(await page.locator('#more').isHidden()).toBe(true);
        } finally {
          await page.close();
        }
      }
    }, 90_000);

    it('says plainly that more locks are held than the 1000 it shows', async () => {
      held = await holdMany(prefixed.locks, 1010);
      const page = await openWithRows('/api/locks', 1000);
      try {
        await page.locator('#more').waitFor({ state: 'visible', timeout: 30_000 });
        expect(await page.locator('#more').textContent()).toContain('more may be held than this page shows');
      } finally {
        await page.close();
      }
    }, 90_000);
  });
});
