import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { fileSecret, signDevToken } from '@udp/auth';
import { reportSkipped } from '@udp/test-kit';
import { start } from './host';

/**
 * `/docs` as a person uses it, in a real browser (Debian's Chromium driven by Playwright) against the embedded
 * system: open the page, authorise with a token, run one request from the page and read its answer there.
 * Skipped, saying why, where Chromium is not installed; in CI (which installs it) its absence is a failure.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

if (!existsSync(CHROMIUM) && !process.env.CI) {
  reportSkipped('/docs in a browser', `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
} else {
  describe('/docs in a browser', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'udp-docs-'));
    let system: { port: number; stop(): Promise<void> };
    let browser: Browser;

    beforeAll(async () => {
      const { EVENTSTORE_URL: _es, MONGO_URL: _mongo, KAFKA_BROKERS: _kafka, ...env } = process.env;
      system = await start({ ...env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' }, { announce: false });
      // Root (CI containers) cannot use Chromium's sandbox.
      browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await system?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('authorises with a token, runs GET /api/history/v2 from the page and shows the answer', async () => {
      const base = `http://127.0.0.1:${system.port}`;
      // The token `npm run token` prints for this DATA_DIR, and an entry for the page to find.
      const token = await signDevToken(fileSecret(dataDir, 'jwt-signing'), 'browser-user');
      const seeded = await fetch(`${base}/api/history/v2`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ item_id: 'urn:show:seen-in-the-browser', last_playback_position: 42 }),
      });
      expect(seeded.status).toBe(200);

      const page = await browser.newPage();
      const pageErrors: string[] = [];
      page.on('pageerror', (error) => pageErrors.push(error.message));
      await page.goto(`${base}/docs`);

      // Authorise: the Bearer scheme's value is the token.
      await page.locator('button.authorize').first().click();
      const bearer = page.locator('.auth-container').filter({ hasText: 'bearer' }).first();
      await bearer.locator('input').fill(token);
      await bearer.locator('button.authorize').click();
      await page.locator('button.btn-done').first().click();

      // Run the list operation from the page.
      const operation = page
        .locator('.opblock.opblock-get')
        .filter({ has: page.locator('.opblock-summary-path[data-path="/api/history/v2"]') })
        .first();
      await operation.locator('.opblock-summary').click();
      await operation.locator('button.try-out__btn').click();
      await operation.locator('button.execute').click();

      const live = operation.locator('.live-responses-table .response').first();
      await expect(live.locator('.response-col_status').textContent()).resolves.toMatch(/^\s*200/);
      const body = JSON.parse((await live.locator('.response-col_description pre.microlight').first().textContent()) ?? '');
      expect(body).toMatchObject({ data: [{ item_id: 'urn:show:seen-in-the-browser', last_playback_position: 42 }], total: 1 });
      expect(pageErrors).toEqual([]);
    }, 60_000);
  });
}
