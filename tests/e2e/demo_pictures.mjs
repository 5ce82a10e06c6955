// The docs' pictures of the demo, in Debian's chromium (playwright-core, never a downloaded browser) at
// 1,280 × 800 in the light theme. Usage: node demo_pictures.mjs CONFIG_JSON, where CONFIG is
//   { base, shownAs, username, password, definition, dir, home, admin }
// The home page's first screen as `home`, read as if the demo were served at `shownAs` (`make run`'s
// address: the page prints the endpoint it was read on, and the demo under test listens on a port of its
// own), then, signed in as `username`, the whole change page of the form definition numbered `definition`
// as `admin`. Prints one JSON report: { endpoint, stats: {label: number}, heading, fields, consoleErrors }.
import path from 'node:path';
import { signIn, shootWhole, watchForErrors } from './admin_pages.mjs';
import { launchChromium } from './chromium.mjs';

const config = JSON.parse(process.argv[2]);
const report = { consoleErrors: [] };

const browser = await launchChromium();
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
  // Every request to `shownAs` goes to the demo under test, with the Host header the browser would send to
  // `shownAs`: what Django builds the page's addresses from.
  const shown = new URL(config.shownAs);
  await context.route(`${shown.origin}/**`, async (route) => {
    const request = route.request();
    const url = request.url().replace(shown.origin, config.base);
    const response = await route.fetch({ url, headers: { ...request.headers(), host: shown.host } });
    await route.fulfill({ response });
  });
  const page = await context.newPage();
  watchForErrors(page, report.consoleErrors);

  await page.goto(`${shown.origin}/`);
  await page.waitForLoadState('networkidle');
  report.endpoint = await page.locator('#endpoint-url').textContent();
  report.stats = await page.locator('dl.stats > div').evaluateAll((items) =>
    Object.fromEntries(
      items.map((item) => [item.querySelector('dt').textContent.trim(), Number(item.querySelector('dd').textContent)]),
    ),
  );
  await page.screenshot({ path: path.join(config.dir, config.home) });

  await signIn(page, config.base, config.username, config.password, `/admin/mcpforms/formdefinition/${config.definition}/change/`);
  report.heading = (await page.locator('#content h2').first().textContent()).trim();
  report.fields = await page.locator('.inline-related.has_original input[name$="-name"]').evaluateAll((inputs) =>
    inputs.map((input) => input.value),
  );
  await shootWhole(page, path.join(config.dir, config.admin));
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
