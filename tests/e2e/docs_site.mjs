// The built documentation site in Debian's chromium (playwright-core, never a downloaded browser) at
// 1,280 × 800. Usage: node docs_site.mjs BASE_URL
//
// Opens BASE_URL/index.html and follows the links of the sidebar's navigation tree and of the pages' own
// toctrees, breadth first, as a reader clicking through the site would. Prints one JSON report for
// test_docs_site.py: every page reached (its path under BASE_URL), the page it was first linked from,
// its title and first heading, and what went wrong while it loaded (console errors, uncaught exceptions,
// failed requests and responses of 400 or more).
import { launchChromium } from './chromium.mjs';

const [base] = process.argv.slice(2);
const origin = new URL(base).origin;
const report = { pages: {} };

const browser = await launchChromium();
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  let problems = [];
  // Chromium asks every site for /favicon.ico; the site has none, and that is not a page's fault.
  const counts = (url) => !url.endsWith('/favicon.ico');
  page.on('console', (message) => {
    if (message.type() === 'error' && counts(message.location().url)) {
      problems.push(`console: ${message.text()} ${message.location().url}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`exception: ${error.message}`));
  page.on('requestfailed', (request) => problems.push(`failed: ${request.url()} ${request.failure()?.errorText}`));
  page.on('response', (response) => {
    if (response.status() >= 400 && counts(response.url())) problems.push(`${response.status()}: ${response.url()}`);
  });

  const start = new URL('index.html', base).href;
  const queue = [[start, null]];
  const seen = new Set([start]);
  while (queue.length > 0) {
    const [url, from] = queue.shift();
    problems = [];
    await page.goto(url, { waitUntil: 'load' });
    const found = await page.evaluate(() => ({
      title: document.title,
      heading: document.querySelector('article h1')?.textContent.trim() ?? null,
      links: [...document.querySelectorAll('.sidebar-tree a.reference, .toctree-wrapper a.reference')].map(
        (link) => link.href,
      ),
    }));
    const here = url.slice(base.length);
    report.pages[here] = { from, title: found.title, heading: found.heading, problems };
    for (const link of found.links) {
      const target = new URL(link);
      target.hash = '';
      if (target.origin === origin && !seen.has(target.href)) {
        seen.add(target.href);
        queue.push([target.href, here]);
      }
    }
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
