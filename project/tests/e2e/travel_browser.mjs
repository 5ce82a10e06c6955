// The demo's multi-step travel_request walked on the home page, in a real browser against the real demo
// server. Usage: node travel_browser.mjs BASE DIR
//
// Debian's chromium through playwright-core (never a downloaded browser), 1,280×800, signed in as the
// demo's staff user. The card calls the tool as a client does and shows one step per round: a trip abroad
// (passport asked; a return date before the departure asked again with Django's message), a domestic
// trip (passport skipped), and a call declined at its second step. Prints one JSON report for
// test_travel_browser.py and saves screenshots in DIR.
import { signIn } from '../../../tests/e2e/admin_pages.mjs';
import { launchChromium } from '../../../tests/e2e/chromium.mjs';
import path from 'node:path';

const [base, artifacts] = process.argv.slice(2);
const report = { consoleErrors: [], pageErrors: [] };
const shot = (name) => ({
  path: path.join(artifacts, `${name}.png`),
  style: '.topbar { position: static !important; }', // a card taller than the window is stitched
});

const browser = await launchChromium();
const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });

try {
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') report.consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => report.pageErrors.push(error.message));
  page.on('response', (response) => {
    if (response.status() >= 400) report.consoleErrors.push(`${response.status()} ${response.url()}`);
  });
  await signIn(page, base, 'staff', 'mcpforms-demo', '/');

  const card = page.locator('#tool-travel_request');
  const button = card.locator('button[type=submit]');
  const shown = card.locator('fieldset.wizard-step:not([hidden])');

  // What the user sees of the round: the step's heading, the fields shown, the overview of the steps.
  const seen = () =>
    card.evaluate((element) => {
      const step = element.querySelector('fieldset.wizard-step:not([hidden])');
      const overview = {};
      for (const item of element.querySelectorAll('.wizard-steps li')) {
        overview[item.dataset.step] = item.querySelector('.wizard-step-state').textContent;
      }
      return {
        heading: step ? step.querySelector('legend').textContent : null,
        fields: step ? [...step.querySelectorAll('.field:not([hidden])')].map((box) => box.dataset.field) : [],
        shownSteps: element.querySelectorAll('fieldset.wizard-step:not([hidden])').length,
        button: element.querySelector('button[type=submit]').textContent.trim(),
        errors: element.querySelector('.form-errors').textContent.trim(),
        overview,
      };
    });
  // Press the button and wait for the round whose heading starts so.
  async function next(heading) {
    await button.click();
    await shown.locator('legend', { hasText: heading }).waitFor();
    return seen();
  }
  async function result() {
    await button.click();
    await card.locator('.outcome:not([hidden])').waitFor();
    return {
      title: await card.locator('.outcome-title').textContent(),
      text: await card.locator('.outcome').textContent(),
      after: await seen(),
    };
  }

  report.before = await seen();
  await card.scrollIntoViewIfNeeded();
  await card.screenshot(shot('travel-before'));

  // Abroad: every step, the passport included.
  const abroad = [];
  abroad.push(await next('Step 1 of at most 4: Destination'));
  await page.fill('#travel_request-destination', 'Tokyo');
  await page.check('#travel_request-international');
  abroad.push(await next('Step 2 of at most 4: Passport'));
  await card.screenshot(shot('travel-passport'));
  await page.fill('#travel_request-passport_number', 'X1234567');
  await page.fill('#travel_request-passport_expiry', '2030-05-31');
  abroad.push(await next('Step 3 of at most 4: Dates and budget'));
  await page.fill('#travel_request-departure', '2027-03-08');
  await page.fill('#travel_request-return_date', '2027-03-01'); // before the departure: Django says no
  await page.fill('#travel_request-budget', '1800');
  await button.click();
  await card.locator('.form-errors:not(:empty)').waitFor();
  abroad.push(await seen());
  await card.screenshot(shot('travel-invalid'));
  await page.fill('#travel_request-departure', '2027-03-01');
  await page.fill('#travel_request-return_date', '2027-03-08');
  abroad.push(await next('Step 4 of at most 4: Confirmation'));
  await page.check('#travel_request-confirmed');
  report.abroad = { rounds: abroad, result: await result() };
  await card.screenshot(shot('travel-abroad-done'));

  // At home: the tool skips the passport step, and the heading says there are at most three.
  const home = [];
  home.push(await next('Step 1 of at most 4: Destination'));
  await page.fill('#travel_request-destination', 'Bergen');
  await page.uncheck('#travel_request-international');
  home.push(await next('Step 2 of at most 3: Dates and budget'));
  await card.screenshot(shot('travel-skipped'));
  home.push(await next('Step 3 of at most 3: Confirmation'));
  await page.check('#travel_request-confirmed');
  report.home = { rounds: home, result: await result() };

  // Declined at the second step: the call ends, and nothing is stored.
  await next('Step 1 of at most 4: Destination');
  await page.fill('#travel_request-destination', 'Lisbon');
  await page.check('#travel_request-international');
  report.declineOffered = (await next('Step 2 of at most 4: Passport')).button;
  await card.locator('[data-decline]').click();
  await card.locator('.outcome-declined').waitFor();
  report.declined = {
    title: await card.locator('.outcome-title').textContent(),
    text: await card.locator('.outcome').textContent(),
    after: await seen(),
  };
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
