// Staff define a form in the Django admin, in Debian's chromium (playwright-core, never a downloaded browser)
// at 1,280 × 800. Usage: node admin_browser.mjs URL USERNAME PASSWORD DIR
//
// Logs in, opens the add-definition page, submits a field whose min is greater than its max, then corrects
// it and saves. Prints one JSON report for test_admin_browser.py and saves screenshots in DIR.
import { signIn, shootWhole, watchForErrors } from './admin_pages.mjs';
import { launchChromium } from './chromium.mjs';
import path from 'node:path';

const [base, username, password, artifacts] = process.argv.slice(2);
const WIDTH = 1280;
const report = { consoleErrors: [] };

const browser = await launchChromium();

// What a person sees of the page: how wide it is, and where the error of the max input sits next to it.
async function measure(page) {
  return page.evaluate(() => {
    const box = (element) => {
      if (!element) return null;
      const { left, right, top, bottom } = element.getBoundingClientRect();
      // Not hidden by CSS nor inside a closed <details>, and not empty.
      const shown = element.checkVisibility({ visibilityProperty: true }) && right > left;
      return { left, right, top: top + window.scrollY, bottom: bottom + window.scrollY, shown };
    };
    const errors = [...document.querySelectorAll('.errorlist')].filter((list) =>
      list.textContent.includes('greater than max'),
    );
    return {
      scrollWidth: document.documentElement.scrollWidth,
      clientWidth: document.documentElement.clientWidth,
      input: box(document.querySelector('#id_fields-0-max')),
      error: box(errors[0] ?? null),
      errorText: errors[0]?.textContent.trim() ?? null,
      errorCount: errors.length,
    };
  });
}

const shoot = (page, name) => shootWhole(page, path.join(artifacts, name));

try {
  const context = await browser.newContext({ viewport: { width: WIDTH, height: 800 } });
  const page = await context.newPage();
  watchForErrors(page, report.consoleErrors);

  await signIn(page, base, username, password, '/admin/mcpforms/formdefinition/add/');
  report.stylesheets = await page.evaluate(() => document.styleSheets.length);
  report.add = await measure(page);
  await shoot(page, 'admin-definition-1280.png');

  await page.fill('#id_name', 'party_rsvp');
  await page.fill('#id_title', 'Party RSVP');
  await page.fill('#id_description', 'Answer the invitation to the summer party.');
  await page.fill('#id_fields-0-name', 'guests');
  await page.selectOption('#id_fields-0-type', 'integer');
  // Min and max are among the folded "More options" of a new field: a person unfolds them first.
  const max = page.locator('#id_fields-0-max');
  report.optionsFolded = !(await max.isVisible());
  await page.locator('#fields-0 details:has(#id_fields-0-max) summary').click();
  report.optionsOpened = await max.isVisible();
  await page.fill('#id_fields-0-min', '5');
  await page.fill('#id_fields-0-max', '1');
  await Promise.all([page.waitForLoadState('load'), page.click('input[name=_continue]')]);
  await page.waitForSelector('.errornote');
  report.invalid = await measure(page);
  await shoot(page, 'admin-definition-error-1280.png');

  // Corrected, the definition saves; its change page shows version 1 and the numbers as typed.
  await page.fill('#id_fields-0-max', '10');
  await Promise.all([page.waitForLoadState('load'), page.click('input[name=_continue]')]);
  await page.waitForSelector('.messagelist .success');
  report.saved = await measure(page);
  report.version = (await page.locator('.field-version .readonly').textContent()).trim();
  // The options the saved field has are unfolded; the empty extra field's stay folded.
  const moreOptions = '.inline-related:not(.empty-form) details:has([name$="-max"])';
  report.optionsShown = await page.$$eval(moreOptions, (all) =>
    all.map((details) => details.open),
  );
  report.min = await page.inputValue('#id_fields-0-min');
  report.max = await page.inputValue('#id_fields-0-max');
  await shoot(page, 'admin-definition-saved-1280.png');
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
