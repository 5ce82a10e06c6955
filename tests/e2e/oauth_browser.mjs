// The consent page and the connected-assistants page in Debian's chromium (playwright-core), at 1,280 × 800
// and at a phone's 390 × 844. Usage: node oauth_browser.mjs URL USERNAME PASSWORD DIR AUTHORIZE_QUERY...
//
// Signs in through the admin's login, opens each consent page (one per query string), allows the last one
// and follows the redirect as far as the client's callback, then opens the connected assistants. Prints one
// JSON report for test_oauth_browser.py and saves screenshots in DIR.
import { signIn } from './admin_pages.mjs';
import { launchChromium } from './chromium.mjs';
import path from 'node:path';

const [base, username, password, artifacts, ...queries] = process.argv.slice(2);
const report = { consoleErrors: [], pages: {} };
const SIZES = { 1280: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };

const browser = await launchChromium();

async function measure(page) {
  return page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
    heading: document.querySelector('h1')?.textContent.trim() ?? null,
    warning: document.querySelector('[role=alert]')?.textContent.trim() ?? null,
    // The Allow button within the first screen: nobody should have to hunt for it.
    allowBottom: document.querySelector('button[name=allow]')?.getBoundingClientRect().bottom ?? null,
  }));
}

try {
  for (const [size, viewport] of Object.entries(SIZES)) {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    page.on('pageerror', (error) => report.consoleErrors.push(String(error)));
    page.on('console', (message) => {
      const where = message.location().url;
      if (message.type() === 'error' && !where.endsWith('/favicon.ico')) {
        report.consoleErrors.push(`${message.text()} ${where}`);
      }
    });
    await signIn(page, base, username, password, '/admin/');

    for (const [index, query] of queries.entries()) {
      await page.goto(`${base}/oauth/authorize/?${query}`);
      const name = `consent-${index + 1}-${size}.png`;
      report.pages[name] = await measure(page);
      await page.screenshot({ path: path.join(artifacts, name), fullPage: true });
    }
    if (size === '1280') {
      // Allow the last one: the browser is sent to the client's callback (nothing listens there).
      let callback = null;
      page.on('request', (request) => {
        if (request.url().startsWith('http://127.0.0.1:') && !request.url().startsWith(base)) callback = request.url();
      });
      await page.click('button[name=allow]').catch(() => {});
      await page.waitForTimeout(1500);
      report.callback = callback;
    }
    await page.goto(`${base}/oauth/connected/`);
    const name = `connected-${size}.png`;
    report.pages[name] = await measure(page);
    await page.screenshot({ path: path.join(artifacts, name), fullPage: true });
    await context.close();
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
