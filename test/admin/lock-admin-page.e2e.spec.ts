import { Module } from '@nestjs/common';
import { chromium, type Browser } from 'playwright-core';
import { LockModule, LockService } from '../../lib/index.js';
import { LockAdminModule } from '../../lib/admin.js';
import { startApp } from '../support/nest-app/create-app.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';

/** Debian's chromium, as .ci/run installs it. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

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
});
