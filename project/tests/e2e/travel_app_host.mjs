// The demo's multi-step travel_request in a real MCP Apps host, in a real browser, against the demo server.
// Usage: node travel_app_host.mjs URL TOKEN DIR
//
// The host's MCP client is the TypeScript SDK v2 client on 2026-07-28, calling as the demo's staff user
// (their personal access token) and declaring MCP Apps, so the server answers the call with the wizard's
// first step as the form UI. The host reads the ui:// resource the tool names and runs it in a sandboxed
// iframe of Debian's chromium (tests/e2e/chromium.mjs) behind ext-apps' AppBridge (tests/e2e/browser_host.js,
// bundled here as wizard_host.mjs bundles it). A user then walks both paths: abroad (Next, Back to the
// first step, Next again, the passport, a return date before the departure refused inline then fixed, the
// confirmation, Submit) and at home (the passport step never comes; Submit unconfirmed is refused, Back
// from the confirmation shows the dates as they were). Prints one JSON report for
// test_travel_app.py and saves 1,280 px screenshots in DIR.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { build } from 'esbuild';
import { launchChromium } from '../../../tests/e2e/chromium.mjs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const [url, token, artifacts] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const sharedHost = path.join(here, '../../../tests/e2e/browser_host.js');
const UI = 'io.modelcontextprotocol/ui';
const LIGHT = {
  '--color-background-primary': '#fbfbfd',
  '--color-background-secondary': '#f4f4f7',
  '--color-text-primary': '#15151a',
  '--color-text-secondary': '#5b5b66',
  '--color-border-primary': '#c9c9d1',
};
const report = { consoleErrors: [], abroad: { screens: [], calls: [] }, atHome: { screens: [], calls: [] } };

const hostScript = await bundleHostPage();
const browser = await launchChromium();
// As tall as browser_host.js's iframe: no blank band below the App in the pictures.
const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
const client = new Client(
  { name: 'mcpforms-e2e-travel-app-host', version: '1.0.0' },
  {
    capabilities: {
      elicitation: { form: {} },
      extensions: { [UI]: { mimeTypes: ['text/html;profile=mcp-app'] } },
    },
    versionNegotiation: { mode: { pin: '2026-07-28' } },
  },
);

// The host's page script: the same AppBridge host as every App test's.
async function bundleHostPage() {
  const bundle = await build({
    entryPoints: [sharedHost],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  });
  return bundle.outputFiles[0].text;
}

// One conversation turn: the model calls travel_request with nothing, and the host shows its App, sends it
// the call's result, and forwards what the App calls (recorded in `flow.calls`, with what came back).
async function openWizard(html, flow) {
  const toolResult = await client.callTool({ name: 'travel_request', arguments: {} });
  flow.toolResult = toolResult.structuredContent;
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') report.consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => report.consoleErrors.push(error.message));
  await page.exposeFunction('hostCallTool', async (params) => {
    const result = await client.callTool(params);
    flow.calls.push({ name: params.name, arguments: params.arguments, result });
    return result;
  });
  await page.setContent(
    '<!DOCTYPE html><html><head><title>Host</title></head><body style="margin:0"></body></html>',
  );
  await page.addScriptTag({ content: hostScript });
  const options = { html, toolInput: {}, theme: 'light', variables: LIGHT };
  await page.evaluate((given) => window.startHost(given), options);
  await page.evaluate((result) => window.sendToolResult(result), toolResult);
  return page;
}

// The App in `page` as the user sees it, once its heading says `expected`: which step's inputs are shown,
// the buttons, the focus, and the form's own message box. Saved as DIR/name.png when `name` is given.
async function screen(page, flow, expected, name) {
  const app = page.frameLocator('iframe');
  await app.locator(`#mcpforms-step:text-is("${expected}")`).waitFor();
  flow.screens.push({
    heading: await app.locator('#mcpforms-step').textContent(),
    shown: await app.locator('section[data-step]:not([hidden])').evaluateAll(
      (sections) => sections.map((section) => section.getAttribute('data-step')),
    ),
    next: await app.locator('button[type=submit]').textContent(),
    back: await app.locator('#mcpforms-back').isVisible(),
    focused: await app.locator('body').evaluate(() => document.activeElement?.id || null),
    formErrors: await app.locator('#mcpforms-errors').textContent(),
  });
  if (!name) return;
  await app.locator('body').evaluate(() => document.activeElement?.blur()); // no caret in the picture
  await page.screenshot({ path: `${artifacts}/${name}.png`, fullPage: true });
}

async function finish(page, flow) {
  const app = page.frameLocator('iframe');
  await app.locator('#mcpforms-done:not([hidden])').waitFor();
  flow.done = await app.locator('#mcpforms-result').textContent();
  flow.formHidden = await app.locator('form.mcpforms-form').isHidden();
}

try {
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  report.protocolVersion = client.getNegotiatedProtocolVersion();
  const { tools } = await client.listTools();
  report.tools = Object.fromEntries(tools.map((tool) => [tool.name, tool._meta ?? null]));
  const uri = report.tools.travel_request.ui.resourceUri;
  const { contents } = await client.readResource({ uri });
  report.resource = { uri, mimeType: contents[0].mimeType };
  const html = contents[0].text;

  // Abroad: the passport is asked; Back shows the first step again with the user's answers.
  const abroad = report.abroad;
  let page = await openWizard(html, abroad);
  let app = page.frameLocator('iframe');
  const next = () => app.locator('button[type=submit]').click();
  await screen(page, abroad, 'Step 1 of at most 4: Destination');
  await app.locator('#id_destination').fill('Tokyo');
  await app.locator('#id_international').check();
  await next();
  await screen(page, abroad, 'Step 2 of at most 4: Passport');
  await app.locator('#mcpforms-back').click();
  await screen(page, abroad, 'Step 1 of at most 4: Destination');
  abroad.prefilled = {
    destination: await app.locator('#id_destination').inputValue(),
    international: await app.locator('#id_international').isChecked(),
  };
  await next();
  await screen(page, abroad, 'Step 2 of at most 4: Passport');
  await app.locator('#id_passport_number').fill('X1234567');
  await app.locator('#id_passport_expiry').fill('2030-05-31');
  await screen(page, abroad, 'Step 2 of at most 4: Passport', 'travel-app-passport');
  await next();
  await screen(page, abroad, 'Step 3 of at most 4: Dates and budget');

  // A return before the departure: Django's message in the form, the step stays; then corrected.
  await app.locator('#id_departure').fill('2027-03-08');
  await app.locator('#id_return_date').fill('2027-03-01');
  await app.locator('#id_budget').fill('1800');
  await next();
  await app.locator('#mcpforms-errors p').waitFor();
  await screen(page, abroad, 'Step 3 of at most 4: Dates and budget', 'travel-app-dates-invalid');
  await app.locator('#id_departure').fill('2027-03-01');
  await app.locator('#id_return_date').fill('2027-03-08');
  await next();
  await screen(page, abroad, 'Step 4 of at most 4: Confirmation');
  await app.locator('#id_confirmed').check();
  await screen(page, abroad, 'Step 4 of at most 4: Confirmation', 'travel-app-confirmation');
  await next();
  await finish(page, abroad);
  await page.close();

  // At home: international ticked, then unticked; the next step is the dates, out of at most three.
  const atHome = report.atHome;
  page = await openWizard(html, atHome);
  app = page.frameLocator('iframe');
  await screen(page, atHome, 'Step 1 of at most 4: Destination');
  await app.locator('#id_destination').fill('Bergen');
  await app.locator('#id_international').check();
  await app.locator('#id_international').uncheck();
  await next();
  await screen(page, atHome, 'Step 2 of at most 3: Dates and budget');
  await app.locator('#id_departure').fill('2027-04-01');
  await app.locator('#id_return_date').fill('2027-04-03');
  await app.locator('#id_budget').fill('250.50');
  await next();
  await screen(page, atHome, 'Step 3 of at most 3: Confirmation');

  // Not confirmed: Django's message next to the box. Back to the dates, which keep their values; again.
  await next();
  await app.locator('#id_confirmed_error p').waitFor();
  atHome.unconfirmed = await app.locator('#id_confirmed_error').textContent();
  await screen(page, atHome, 'Step 3 of at most 3: Confirmation');
  await app.locator('#mcpforms-back').click();
  await screen(page, atHome, 'Step 2 of at most 3: Dates and budget');
  atHome.prefilled = {
    departure: await app.locator('#id_departure').inputValue(),
    return_date: await app.locator('#id_return_date').inputValue(),
    budget: await app.locator('#id_budget').inputValue(),
  };
  await next();
  await screen(page, atHome, 'Step 3 of at most 3: Confirmation');
  await app.locator('#id_confirmed').check();
  await next();
  await finish(page, atHome);
} finally {
  await client.close().catch(() => {});
  await browser.close();
}
console.log(JSON.stringify(report));
