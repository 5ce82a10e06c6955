// Staff build a conditional multi-step form in the Django admin, in Debian's chromium (playwright-core,
// never a downloaded browser) at 1,280 × 800. Usage: node admin_steps_browser.mjs URL USERNAME PASSWORD DIR
//
// Logs in, opens the add-definition page and defines three steps: the trip (destination, whether it is
// international), a passport asked only when international is true, then the dates. Each step starts on
// a field whose folded "Step" options get a title (and, for the passport, its condition), as a person
// would: unfolding them, typing, adding another field. First saved with the condition on the wrong field,
// it shows that error; corrected, it saves. Prints one JSON report for test_admin_steps_browser.py and
// saves screenshots in DIR.
import { signIn, shootWhole, watchForErrors } from './admin_pages.mjs';
import { launchChromium } from './chromium.mjs';
import path from 'node:path';

const [base, username, password, artifacts] = process.argv.slice(2);
const WIDTH = 1280;
const report = { consoleErrors: [] };

// The rows, in order; `step` starts a step on that row, `when` is its condition.
const ROWS = [
  { name: 'destination', type: 'text', required: true, step: 'Trip' },
  { name: 'international', type: 'boolean' },
  {
    name: 'passport_number',
    type: 'text',
    required: true,
    step: 'Passport',
    // Wrong at first: a field of this very step, which the admin refuses next to the input.
    when: { field: 'passport_number', condition: 'true' },
  },
  { name: 'start', type: 'date', required: true, step: 'Dates' },
];

const browser = await launchChromium();

const shoot = (page, name) => shootWhole(page, path.join(artifacts, name));

// The "Step" options of row `index`, unfolded as a person unfolds them: a click on their summary.
async function unfoldStep(page, index) {
  const input = page.locator(`#id_fields-${index}-step`);
  if (!(await input.isVisible())) {
    await page.locator(`#fields-${index} details:has(#id_fields-${index}-step) summary`).click();
  }
}

try {
  const context = await browser.newContext({ viewport: { width: WIDTH, height: 800 } });
  const page = await context.newPage();
  watchForErrors(page, report.consoleErrors);

  await signIn(page, base, username, password, '/admin/mcpforms/formdefinition/add/');

  await page.fill('#id_name', 'trip_request');
  await page.fill('#id_title', 'Trip request');
  await page.fill('#id_description', 'Request a business trip.');
  report.stepFolded = !(await page.locator('#id_fields-0-step').isVisible());
  for (const [index, row] of ROWS.entries()) {
    if (index > 0) await page.locator('.mcpforms-fields .add-row a').click();
    await page.fill(`#id_fields-${index}-name`, row.name);
    await page.selectOption(`#id_fields-${index}-type`, row.type);
    if (row.required) await page.check(`#id_fields-${index}-required`);
    if (row.step) {
      await unfoldStep(page, index);
      await page.fill(`#id_fields-${index}-step`, row.step);
    }
    if (row.when) {
      await page.fill(`#id_fields-${index}-condition_field`, row.when.field);
      await page.selectOption(`#id_fields-${index}-condition`, row.when.condition);
    }
  }
  await Promise.all([page.waitForLoadState('load'), page.click('input[name=_continue]')]);
  await page.waitForSelector('.errornote');
  report.invalid = await page.evaluate(() => {
    const error = document.querySelector('#id_fields-2-condition_field_error');
    const input = document.querySelector('#id_fields-2-condition_field');
    return {
      error: error?.textContent.trim() ?? null,
      // Django unfolds the folded options that hold an error: the person sees it without a click.
      shown: Boolean(error?.checkVisibility() && input?.checkVisibility()),
      scrollWidth: document.documentElement.scrollWidth,
    };
  });
  await shoot(page, 'admin-steps-error-1280.png');

  // Corrected: the passport step reads `international`, of the trip step before it.
  await page.fill('#id_fields-2-condition_field', 'international');
  await Promise.all([page.waitForLoadState('load'), page.click('input[name=_continue]')]);
  await page.waitForSelector('.messagelist .success');
  report.saved = await page.evaluate(() => ({
    url: location.pathname,
    scrollWidth: document.documentElement.scrollWidth,
    // The rows that start a step show their step options unfolded; the others keep them folded.
    stepShown: [...document.querySelectorAll('.inline-related:not(.empty-form)')].map(
      (row) => row.querySelector('details:has([name$="-step"])').open,
    ),
    // And say so in their heading, so the steps read down the page.
    stepHeadings: [...document.querySelectorAll('.inline-related:not(.empty-form) h3')].map(
      (heading) => heading.querySelector('.mcpforms-step-title')?.textContent ?? null,
    ),
    steps: [...document.querySelectorAll('.field-form_preview .mcpforms-step')].map((step) => ({
      heading: step.querySelector('h4').textContent.trim(),
      asked: step.querySelector('p').textContent.trim(),
      fields: [...step.querySelectorAll('input, select, textarea')].map((input) => input.name),
    })),
    schemaSteps: document.querySelectorAll('.field-schema_preview .mcpforms-step').length,
  }));
  await shoot(page, 'admin-steps-1280.png');
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
