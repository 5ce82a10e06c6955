// A multi-step form in a real MCP Apps host, in a real browser, against a real mcpforms server.
// Usage: node wizard_host.mjs URL DIR
//
// The host's MCP client is the TypeScript SDK v2 client, declaring MCP Apps and form elicitation (the App
// wins, as for a one-form tool). The wizard's ui:// App runs in a sandboxed iframe of Debian's chromium
// (playwright-core, never a downloaded browser) behind ext-apps' AppBridge (browser_host.js). A user goes
// through the "trip" wizard of tests/e2e/wizard_urls.py: step 1, Next, step 2, Back, an answer changed so
// that the passport step no longer applies, Next, and the last step submitted. Prints one JSON report for
// test_wizard_browser.py and saves screenshots, 1,280 px wide, in DIR.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { build } from 'esbuild';
import { launchChromium } from './chromium.mjs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const [base, artifacts] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const UI = 'io.modelcontextprotocol/ui';
// Both themes name the same variables: switching back to light must undo every dark one.
const LIGHT = {
  '--color-background-primary': '#fbfbfd',
  '--color-background-secondary': '#f4f4f7',
  '--color-text-primary': '#15151a',
  '--color-text-secondary': '#5b5b66',
  '--color-border-primary': '#c9c9d1',
};
const DARK = {
  '--color-background-primary': '#15171c',
  '--color-background-secondary': '#1f232a',
  '--color-text-primary': '#e9eaee',
  '--color-text-secondary': '#a3a8b4',
  '--color-border-primary': '#3a404c',
};
const report = { calls: [], screens: [] };

const browser = await launchChromium();
const context = await browser.newContext({ viewport: { width: 1280, height: 820 } });
const client = new Client(
  { name: 'mcpforms-e2e-wizard-host', version: '1.0.0' },
  {
    capabilities: {
      elicitation: { form: {} },
      extensions: { [UI]: { mimeTypes: ['text/html;profile=mcp-app'] } },
    },
    versionNegotiation: { mode: { pin: '2026-07-28' } },
  },
);

try {
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  const { tools } = await client.listTools();
  report.tools = Object.fromEntries(tools.map((tool) => [tool.name, tool._meta ?? null]));
  const { contents } = await client.readResource({ uri: report.tools.trip.ui.resourceUri });

  // The model calls the wizard; on an Apps host the result is its first step, as the form UI.
  const toolResult = await client.callTool({ name: 'trip', arguments: {} });
  report.toolResult = toolResult.structuredContent;

  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') report.consoleErrors = [...(report.consoleErrors ?? []), message.text()];
  });
  await page.exposeFunction('hostCallTool', async (params) => {
    report.calls.push(params);
    return client.callTool(params);
  });
  await page.setContent('<!DOCTYPE html><html><head><title>Host</title></head><body style="margin:0"></body></html>');
  const bundle = await build({
    entryPoints: [path.join(here, 'browser_host.js')],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  });
  await page.addScriptTag({ content: bundle.outputFiles[0].text });
  await page.evaluate(
    (options) => window.startHost(options),
    { html: contents[0].text, toolInput: {}, theme: 'light', variables: LIGHT },
  );
  await page.evaluate((result) => window.sendToolResult(result), toolResult);

  const app = page.frameLocator('iframe');
  const heading = app.locator('#mcpforms-step');
  const next = app.locator('button[type=submit]');
  const back = app.locator('#mcpforms-back');

  // What the user sees of the App now: the heading, which step's inputs, the buttons, the focus.
  async function screen(name, expected) {
    await app.locator(`#mcpforms-step:text-is("${expected}")`).waitFor();
    const shown = await app.locator('section[data-step]:not([hidden])').evaluateAll(
      (sections) => sections.map((section) => section.getAttribute('data-step')),
    );
    report.screens.push({
      name,
      heading: await heading.textContent(),
      shown,
      next: await next.textContent(),
      back: await back.isVisible(),
      focused: await app.locator('body').evaluate(() => document.activeElement?.id || null),
    });
    await page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true });
  }

  await screen('wizard-step-1', 'Step 1 of at most 3: Destination');
  await app.locator('#id_destination').fill('Tokyo');
  await app.locator('#id_international').check();
  await next.click();
  await screen('wizard-step-2-passport', 'Step 2 of at most 3: Passport');

  // Django rejects a passport number that is too short: shown next to its input, the step stays.
  await app.locator('#id_passport_number').fill('X1');
  await next.click();
  await app.locator('#id_passport_number_error p').waitFor();
  report.inlineError = await app.locator('#id_passport_number_error').textContent();
  report.stillOn = await heading.textContent();
  await page.evaluate((variables) => window.setHostTheme('dark', variables), DARK);
  await page.waitForTimeout(100);
  await page.screenshot({ path: path.join(artifacts, 'wizard-step-2-invalid-dark.png'), fullPage: true });
  await page.evaluate((variables) => window.setHostTheme('light', variables), LIGHT);

  // Back: step 1 again, with the user's answers; staying at home, the passport step no longer applies.
  await back.click();
  await screen('wizard-back-to-step-1', 'Step 1 of at most 3: Destination');
  report.prefilled = {
    destination: await app.locator('#id_destination').inputValue(),
    international: await app.locator('#id_international').isChecked(),
  };
  await app.locator('#id_destination').fill('Oslo');
  await app.locator('#id_international').uncheck();
  await next.click();
  await screen('wizard-step-2-dates', 'Step 2 of at most 2: Dates');

  await app.locator('#id_start').fill('2027-01-02');
  await app.locator('#id_budget').fill('300');
  await next.click();
  await app.locator('#mcpforms-done:not([hidden])').waitFor();
  report.done = await app.locator('#mcpforms-result').textContent();
  report.formHidden = await app.locator('form.mcpforms-form').isHidden();
  await page.screenshot({ path: path.join(artifacts, 'wizard-done.png'), fullPage: true });
} finally {
  await client.close().catch(() => {});
  await browser.close();
}
console.log(JSON.stringify(report));
