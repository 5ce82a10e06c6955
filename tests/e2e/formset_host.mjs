// A wizard's formset step in a real MCP Apps host, in a real browser, against a real mcpforms server.
// Usage: node formset_host.mjs URL DIR
//
// The same host as wizard_host.mjs (the TypeScript SDK v2 client declaring MCP Apps and form elicitation,
// ext-apps' AppBridge from browser_host.js, Debian's chromium through playwright-core). A user goes through
// the "crew" wizard of tests/e2e/formset_urls.py: the crew's name, then its members: a row added, one
// removed, an invalid age shown inline, corrected, and the last step submitted. Prints one JSON report for
// test_wizard_formset_browser.py and saves screenshots, 1,280 px wide, in DIR.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { build } from 'esbuild';
import { launchChromium } from './chromium.mjs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const [base, artifacts] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const UI = 'io.modelcontextprotocol/ui';
const LIGHT = {
  '--color-background-primary': '#fbfbfd',
  '--color-text-primary': '#15151a',
  '--color-border-primary': '#c9c9d1',
};
const report = { calls: [] };

const browser = await launchChromium();
const context = await browser.newContext({ viewport: { width: 1280, height: 820 } });
const client = new Client(
  { name: 'mcpforms-e2e-formset-host', version: '1.0.0' },
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
  const crew = tools.find((tool) => tool.name === 'crew');
  report.membersSchema = crew.inputSchema.properties.members;
  const { contents } = await client.readResource({ uri: crew._meta.ui.resourceUri });
  const toolResult = await client.callTool({ name: 'crew', arguments: {} });

  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') report.consoleErrors = [...(report.consoleErrors ?? []), message.text()];
  });
  page.on('pageerror', (error) => {
    report.consoleErrors = [...(report.consoleErrors ?? []), String(error)];
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
  const next = app.locator('button[type=submit]');
  const section = app.locator('section[data-step="members"]');
  const rows = section.locator('[data-rows] > [data-row]');
  const addRow = section.locator('[data-add-row]');
  const shot = (name) => page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true });
  // What the rows hold now: each row's number, name and age, as the user sees them.
  const rowsShown = () => rows.evaluateAll((all) => all.map((row) => ({
    number: row.querySelector('[data-row-number]').textContent,
    name: row.querySelector('input[name$="-name"]').value,
    age: row.querySelector('input[name$="-age"]').value,
  })));

  await app.locator('#mcpforms-step:text-is("Step 1 of at most 3: About")').waitFor();
  await app.locator('#id_crew').fill('Owls');
  await next.click();
  await app.locator('#mcpforms-step:text-is("Step 2 of at most 3: Members")').waitFor();
  report.heading = await app.locator('#mcpforms-step').textContent();
  report.rowsAtFirst = await rows.count();
  await shot('formset-step');

  await app.locator('#id_members-0-name').fill('Ann');
  await app.locator('#id_members-0-age').fill('30');
  await app.locator('#id_members-1-name').fill('Bo');
  await addRow.click();
  report.focusedAfterAdd = await app.locator('body').evaluate(() => document.activeElement?.id || null);
  await app.locator('#id_members-2-name').fill('Cy');
  await app.locator('#id_members-2-age').fill('-1');
  report.afterAdd = await rowsShown();
  report.addDisabledAtMax = await addRow.isDisabled();
  await shot('formset-three-rows');

  // Remove the second row: the others close up, renumbered, their values kept.
  await rows.nth(1).locator('[data-remove-row]').click();
  report.afterRemove = await rowsShown();
  report.addDisabledAfterRemove = await addRow.isDisabled();

  // Django rejects a negative age: shown under that row's input, the step stays.
  await next.click();
  await app.locator('#id_members-1-age_error p').waitFor();
  report.inlineError = await app.locator('#id_members-1-age_error').textContent();
  report.invalid = await app.locator('#id_members-1-age').getAttribute('aria-invalid');
  report.stillOn = await app.locator('#mcpforms-step').textContent();
  await shot('formset-invalid-row');

  await app.locator('#id_members-1-age').fill('');
  await next.click();
  await app.locator('#mcpforms-step:text-is("Step 3 of at most 3: Closing")').waitFor();
  await app.locator('#id_remarks').fill('Ready');
  await next.click();
  await app.locator('#mcpforms-done:not([hidden])').waitFor();
  report.done = await app.locator('#mcpforms-result').textContent();
  await shot('formset-done');
} finally {
  await client.close().catch(() => {});
  await browser.close();
}
console.log(JSON.stringify(report));
