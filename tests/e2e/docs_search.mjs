// The built documentation site's own search (Sphinx's searchtools.js) in Debian's chromium, as a reader
// types a query into the search box. Usage: node docs_search.mjs BASE_URL QUERY...
//
// For each query, opens BASE_URL/search.html?q=QUERY, waits until the search says it is finished, and
// prints one JSON report for test_docs_site.py: the pages found, best first, each as its path under
// BASE_URL.
import { launchChromium } from './chromium.mjs';

const [base, ...queries] = process.argv.slice(2);
const report = { results: {} };

const browser = await launchChromium();
try {
  const page = await (await browser.newContext()).newPage();
  for (const query of queries) {
    const url = new URL(`search.html?q=${encodeURIComponent(query)}`, base);
    await page.goto(url.href, { waitUntil: 'load' });
    await page.waitForFunction(
      () => document.querySelector('#search-results .search-summary')?.textContent.trim(),
      null,
      { timeout: 30_000 },
    );
    report.results[query] = await page.evaluate(
      (prefix) =>
        [...document.querySelectorAll('#search-results ul.search li > a')].map((link) => {
          const target = new URL(link.href);
          return target.pathname.slice(new URL(prefix).pathname.length) + target.hash;
        }),
      base,
    );
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
