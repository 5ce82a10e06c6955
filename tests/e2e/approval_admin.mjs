// A staff member decides an approval request in the Django admin, in Debian's chromium (playwright-core, never
// a downloaded browser) at 1,280 px. Usage: node approval_admin.mjs CONFIG_JSON, where CONFIG is
//   { base, username, password, task (the request's number), decision?: "approve"|"reject"|"amend",
//     reason?, shots?: { dir, list?, request? }, hold?: { ready, go } }
// Signs in, reads the list of approval requests, opens the request's page (what was asked, read-only, and
// the buttons), and, with `decision`, types the reason and presses its button. With `hold`, it writes the
// file `ready` once the page is open and waits for the file `go` before pressing: a page left open while
// the request changes (the requester cancels it meanwhile). Prints one JSON report:
// { listed: [{number, tool, requester, status}], values: {label: value}, buttons: [...], cannotDecide,
//   messages: [...] (what the admin said after the decision), consoleErrors }
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { signIn, shootWhole, watchForErrors } from './admin_pages.mjs';
import { launchChromium } from './chromium.mjs';

const config = JSON.parse(process.argv[2]);
const WIDTH = 1280;
const LIST = '/admin/mcpforms/tooltask/';
const report = { consoleErrors: [] };

async function shoot(page, name) {
  if (config.shots?.[name]) await shootWhole(page, path.join(config.shots.dir, config.shots[name]));
}

// What a person reads on the request's page.
const readRequest = (page) =>
  page.evaluate(() => {
    const values = {};
    for (const row of document.querySelectorAll('table.mcpforms-values tr')) {
      values[row.querySelector('th').textContent.trim()] = row.querySelector('td').textContent.trim();
    }
    const buttons = [...document.querySelectorAll('#mcpforms-decide button[name=decision]')].map((button) =>
      button.textContent.trim(),
    );
    const refusal = document.querySelector('.mcpforms-cannot-decide');
    const messages = [...document.querySelectorAll('ul.messagelist li')].map((item) => ({
      level: item.className,
      text: item.textContent.trim(),
    }));
    const field = (name) => document.querySelector(`.field-${name} .readonly`)?.textContent.trim() ?? null;
    return {
      values,
      buttons,
      cannotDecide: refusal ? refusal.textContent.trim() : null,
      messages,
      status: field('status'),
      statusMessage: field('status_message'),
      decision: field('decision'),
      decidedBy: field('decided_by'),
      reason: field('reason'),
      scrollWidth: document.documentElement.scrollWidth,
    };
  });

const browser = await launchChromium();
try {
  const context = await browser.newContext({ viewport: { width: WIDTH, height: 800 } });
  const page = await context.newPage();
  watchForErrors(page, report.consoleErrors, { failedResponses: false });

  await signIn(page, config.base, config.username, config.password, LIST);
  report.listed = await page.evaluate(() =>
    [...document.querySelectorAll('#result_list tbody tr')].map((row) => {
      const cell = (name) => row.querySelector(`.field-${name}`)?.textContent.trim() ?? null;
      return { number: cell('number'), tool: cell('tool'), requester: cell('requester'), status: cell('status') };
    }),
  );
  report.listWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  await shoot(page, 'list');

  await page.goto(`${config.base}${LIST}${config.task}/change/`);
  Object.assign(report, await readRequest(page));
  await shoot(page, 'request');

  if (config.decision) {
    if (config.hold) {
      writeFileSync(config.hold.ready, 'open');
      while (!existsSync(config.hold.go)) await sleep(100);
    }
    if (config.reason) await page.fill('#id_decision_reason', config.reason);
    // The decision posts, and the admin shows the request's page again with what happened: a decision
    // always says something, and the page before it had nothing to say.
    await page.click(`#mcpforms-decide button[value=${config.decision}]`);
    await page.waitForSelector('ul.messagelist li');
    await page.waitForLoadState('load');
    report.after = await readRequest(page);
    await shoot(page, 'after');
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
