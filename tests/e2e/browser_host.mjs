// A real MCP Apps host in a real browser, against a real mcpforms server. Usage: node browser_host.mjs URL DIR
//
// The host's MCP client is the TypeScript SDK v2 client, declaring MCP Apps and URL-mode elicitation. The
// App (the form's ui:// document) runs in a sandboxed iframe of Debian's chromium, driven by playwright-core
// (never a downloaded browser), behind ext-apps' AppBridge. Prints one JSON report for test_browser.py and
// saves screenshots (light and dark), 1,280 px wide, in DIR.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { build } from 'esbuild';
import { launchChromium } from './chromium.mjs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const [base, artifacts] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const UI = 'io.modelcontextprotocol/ui';
const LIGHT = { '--color-background-primary': '#fbfbfd', '--color-text-primary': '#15151a' };
const DARK = {
  '--color-background-primary': '#15171c',
  '--color-background-secondary': '#1f232a',
  '--color-text-primary': '#e9eaee',
  '--color-text-secondary': '#a3a8b4',
  '--color-border-primary': '#3a404c',
};
const report = { calls: [], urlMode: {} };

const browser = await launchChromium();
const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });

// URL mode: the user opens the link in the browser, fills the page and comes back (spec §7.3).
async function fillPage(url) {
  const page = await context.newPage();
  await page.goto(url);
  report.urlMode.prefilled = await page.inputValue('#id_username');
  await page.fill('#id_password', 'short');
  await Promise.all([page.waitForLoadState('load'), page.click('button[type=submit]')]);
  await page.waitForSelector('#id_password_error p');
  report.urlMode.inlineError = await page.textContent('#id_password_error');
  report.urlMode.describedBy = await page.getAttribute('#id_password', 'aria-describedby');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.screenshot({ path: path.join(artifacts, 'url-mode-light.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: path.join(artifacts, 'url-mode-dark.png'), fullPage: true });
  await page.fill('#id_password', 'correct horse battery staple');
  await page.click('button[type=submit]');
  await page.waitForSelector('#mcpforms-done:not([hidden])');
  report.urlMode.done = await page.textContent('#mcpforms-done');
  await page.close();
}

const client = new Client(
  { name: 'mcpforms-e2e-browser-host', version: '1.0.0' },
  {
    capabilities: {
      elicitation: { form: {}, url: {} },
      extensions: { [UI]: { mimeTypes: ['text/html;profile=mcp-app'] } },
    },
    versionNegotiation: { mode: { pin: '2026-07-28' } },
    inputRequired: { autoFulfill: true, maxRounds: 5 },
  },
);
client.setRequestHandler('elicitation/create', async (request) => {
  if (request.params.mode !== 'url') return { action: 'decline' };
  report.urlMode.message = request.params.message;
  await fillPage(request.params.url);
  return { action: 'accept' };
});

try {
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  const { tools } = await client.listTools();
  report.tools = Object.fromEntries(tools.map((tool) => [tool.name, tool._meta ?? null]));
  const uri = report.tools.testapp_signup.ui.resourceUri;
  const { contents } = await client.readResource({ uri });
  report.resourceMimeType = contents[0].mimeType;

  // The model calls the tool with what it knows; on an Apps host the result is the form UI.
  const toolInput = { plan: 'team' };
  const toolResult = await client.callTool({ name: 'testapp_signup', arguments: toolInput });
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
    { html: contents[0].text, toolInput, theme: 'light', variables: LIGHT },
  );

  const app = page.frameLocator('iframe');
  await app.locator('#id_plan').waitFor();
  await page.waitForFunction(() => document.querySelector('iframe').contentDocument === null); // sandboxed
  // Prefilled by ui/notifications/tool-input alone; the tool result (its values and errors) comes after.
  report.prefilledPlan = await app.locator('#id_plan').evaluate(async (select) => {
    for (let tries = 0; select.value !== 'team' && tries < 50; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return select.value;
  });
  await page.evaluate((result) => window.sendToolResult(result), toolResult);

  // A user types into the form and submits; Django rejects the address (the form's clean_email).
  await app.locator('#id_email').fill('ada@example.invalid');
  await app.locator('#id_age').fill('36');
  await app.locator('#id_newsletter').check();
  await app.locator('button[type=submit]').click();
  await app.locator('#id_email_error p').waitFor();
  report.inlineError = await app.locator('#id_email_error').textContent();
  report.emailInvalid = await app.locator('#id_email').getAttribute('aria-invalid');
  report.emailDescribedBy = await app.locator('#id_email').getAttribute('aria-describedby');
  report.errorRole = await app.locator('#id_email_error').getAttribute('role');
  report.focused = await app.locator(':focus').getAttribute('id');
  await page.screenshot({ path: path.join(artifacts, 'app-light.png'), fullPage: true });
  await page.evaluate((variables) => window.setHostTheme('dark', variables), DARK);
  await page.waitForTimeout(100);
  report.darkBackground = await app.locator('body').evaluate((body) => getComputedStyle(body).backgroundColor);
  await page.screenshot({ path: path.join(artifacts, 'app-dark.png'), fullPage: true });

  // Corrected with the keyboard, as a user would: the submission completes.
  await app.locator('#id_email').fill('');
  await app.locator('#id_email').type('ada@example.com');
  await app.locator('#id_email').press('Enter');
  await app.locator('#mcpforms-done:not([hidden])').waitFor();
  report.done = await app.locator('#mcpforms-result').textContent();
  report.errorCleared = await app.locator('#id_email_error').textContent();
  await page.screenshot({ path: path.join(artifacts, 'app-dark-done.png'), fullPage: true });

  // URL mode: a password form, through the same client, the link opened in the same browser.
  const vault = await client.callTool({ name: 'vault', arguments: { username: 'ada' } });
  report.urlMode.result = vault.content;
} finally {
  await client.close().catch(() => {});
  await browser.close();
}
console.log(JSON.stringify(report));
