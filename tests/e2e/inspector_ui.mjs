// The MCP Inspector's web UI, as a person uses it, in Debian's chromium driven by playwright-core (never a
// downloaded browser). Usage: node inspector_ui.mjs INSPECTOR_URL DIR. The Inspector was started on the demo
// with the staff token. This switches the server on, opens Tools and executes create_ticket with its whole
// form filled; then opens create_ticket under Apps with the subject alone, where the Inspector renders
// mcpforms' own form (an MCP App) for the rest, and submits it. Prints one JSON report for
// tests/e2e/test_clients.py and saves screenshots in DIR.
import path from 'node:path';
import { launchChromium } from './chromium.mjs';

const [inspector, artifacts] = process.argv.slice(2);
const TOOLS = ['create_ticket', 'event_rsvp', 'export_tickets', 'feedback', 'refund_request', 'signup', 'travel_request'];

const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(20000);
  await page.goto(inspector);
  // The switch's own input is hidden under Mantine's track: a person clicks the track.
  await page.locator('.mantine-Switch-track').first().click();
  const era = await page.getByText(/^MCP \d{4}-\d{2}-\d{2}$/).textContent();
  await page.getByText('Tools', { exact: true }).first().click();
  const heading = await page.getByText(/^Tools \(\d+\)$/).textContent();
  const listed = {};
  for (const name of TOOLS) listed[name] = await page.getByText(name, { exact: true }).first().isVisible();
  await page.screenshot({ path: path.join(artifacts, 'inspector-ui-tools.png') });

  await page.getByText('create_ticket', { exact: true }).first().click();
  await page.getByRole('textbox', { name: 'Subject' }).fill('Filed from the Inspector UI');
  await page.getByRole('textbox', { name: 'Body' }).fill('Typed into its form for create_ticket.');
  await page.getByRole('textbox', { name: 'Priority' }).click();
  await page.getByRole('option', { name: 'High' }).click();
  await page.getByRole('button', { name: 'Execute Tool' }).click();
  await page.getByText('Structured Output').waitFor();
  const results = await page.locator('body').innerText();
  await page.screenshot({ path: path.join(artifacts, 'inspector-ui-result.png') });

  // The form as an MCP App: the Inspector hosts mcpforms' ui:// document in its sandbox (an iframe in an
  // iframe), prefilled with the subject; the user fills in the rest and submits it to create_ticket_submit.
  await page.getByText('Apps', { exact: true }).first().click();
  await page.getByText('Create ticket', { exact: true }).first().click();
  await page.getByRole('textbox', { name: 'Subject' }).fill('Filed through the form app');
  await page.getByRole('button', { name: 'Open App' }).click();
  const app = page.frameLocator('iframe').frameLocator('iframe');
  const prefilled = await app.locator('#id_subject').inputValue();
  await app.locator('#id_body').fill('Typed into the form the Inspector renders.');
  await app.locator('#id_priority').selectOption('high');
  await page.screenshot({ path: path.join(artifacts, 'inspector-ui-app.png') });
  await app.locator('button[type=submit]').click();
  await app.locator('#mcpforms-done:not([hidden])').waitFor();
  const submitted = JSON.parse(await app.locator('#mcpforms-result').textContent());
  await page.screenshot({ path: path.join(artifacts, 'inspector-ui-app-done.png') });

  const pk = Number(/"pk": (\d+)/.exec(results)?.[1]);
  console.log(JSON.stringify({ era, heading, listed, pk, prefilled, submitted }));
} finally {
  await browser.close();
}
