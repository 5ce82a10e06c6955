// The demo's home page in a real browser, against the real demo server. Usage: node demo_browser.mjs BASE DIR
//
// Debian's chromium through playwright-core (never a downloaded browser), 1,280×800. A visitor signs up
// through the page (an invalid address first), signs in to the admin as staff, opens a ticket and fills a
// password form on its URL-mode page, all through the page's own buttons. Prints one JSON report for
// test_demo_browser.py and saves screenshots in DIR.
import { signIn } from '../../../tests/e2e/admin_pages.mjs';
import { launchChromium } from '../../../tests/e2e/chromium.mjs';
import path from 'node:path';

const [base, artifacts] = process.argv.slice(2);
const report = { consoleErrors: [], pageErrors: [] };
const shot = (name) => path.join(artifacts, `${name}.png`);
// A card taller than the window is stitched from several scrolls: keep the sticky top bar out of it.
const card = (name) => ({ path: shot(name), style: '.topbar { position: static !important; }' });

const browser = await launchChromium();
const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });

function watch(page, name) {
  page.on('console', (message) => {
    if (message.type() === 'error') report.consoleErrors.push(`${name}: ${message.text()}`);
  });
  page.on('pageerror', (error) => report.pageErrors.push(`${name}: ${error.message}`));
  page.on('response', (response) => {
    if (response.status() >= 400) report.consoleErrors.push(`${name}: ${response.status()} ${response.url()}`);
  });
  return page;
}

try {
  const home = watch(await context.newPage(), 'home');
  await home.goto(`${base}/`);
  report.title = await home.title();
  report.tools = await home.locator('article.tool').evaluateAll((cards) => cards.map((card) => card.id.slice(5)));
  report.anonymousGates = await home.locator('.gate').evaluateAll((gates) => gates.map((gate) => gate.id.replace(/-gate$/, '')));
  report.curl = await home.locator('#curl-snippet').textContent();
  await home.screenshot({ path: shot('home-light') });
  await home.screenshot({ path: shot('home-light-full'), fullPage: true });

  // A copy button puts the endpoint on the clipboard.
  await home.locator('[data-copy="endpoint-url"]').click();
  report.copied = await home.evaluate(() => navigator.clipboard.readText());
  report.copyLabel = await home.locator('[data-copy="endpoint-url"]').textContent();

  // Sign up, anonymously: an address Django rejects first, shown next to its field.
  const signup = home.locator('#tool-signup');
  await home.fill('#signup-email', 'ada@example');
  await home.selectOption('#signup-plan', 'team');
  await home.fill('#signup-age', '36');
  await home.check('#signup-newsletter');
  await signup.locator('button[type=submit]').click();
  await home.locator('#signup-email_error p').waitFor();
  report.signup = {
    inlineError: await home.locator('#signup-email_error').textContent(),
    invalid: await home.locator('#signup-email').getAttribute('aria-invalid'),
    describedBy: await home.locator('#signup-email').getAttribute('aria-describedby'),
    focused: await home.evaluate(() => document.activeElement.id),
    summary: await home.locator('#signup-errors').textContent(),
  };
  await signup.screenshot(card('signup-invalid'));
  await home.fill('#signup-email', 'ada@example.com');
  await home.press('#signup-email', 'Enter');
  await home.locator('#signup-outcome:not([hidden])').waitFor();
  report.signup.outcome = await home.locator('#signup-outcome .outcome-title').textContent();
  report.signup.result = JSON.parse(await home.locator('#signup-outcome pre').textContent());
  report.signup.errorCleared = await home.locator('#signup-email_error').textContent();
  await signup.screenshot(card('signup-done'));

  await home.emulateMedia({ colorScheme: 'dark' });
  report.darkBackground = await home.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await home.evaluate(() => window.scrollTo(0, 0));
  await home.screenshot({ path: shot('home-dark') });
  await home.screenshot({ path: shot('home-dark-full'), fullPage: true });
  await home.emulateMedia({ colorScheme: 'light' });

  // Sign in to the admin with the demo login, and come back.
  await signIn(home, base, 'staff', 'mcpforms-demo', '/');
  report.signedIn = (await home.locator('.who').textContent()).replace(/\s+/g, ' ').trim();
  report.staffGates = await home.locator('.gate').count();
  await home.screenshot({ path: shot('home-staff') });

  // A ticket, through the session (and its CSRF token).
  const ticket = home.locator('#tool-create_ticket');
  await home.fill('#create_ticket-subject', 'Lift stuck');
  await home.fill('#create_ticket-body', 'The lift is stuck on floor 3.');
  await home.selectOption('#create_ticket-priority', 'high');
  await home.fill('#create_ticket-due', '2027-01-15');
  await ticket.locator('button[type=submit]').click();
  await home.locator('#create_ticket-outcome:not([hidden])').waitFor();
  report.ticket = JSON.parse(await home.locator('#create_ticket-outcome pre').textContent());
  await ticket.screenshot(card('ticket-done'));

  // The admin-defined form with a password: the page sends the user to its URL-mode page.
  const vpn = home.locator('#tool-vpn_access');
  report.vpnNote = await vpn.locator('.page-note').textContent();
  await home.fill('#vpn_access-username', 'ada');
  await vpn.locator('input[name=teams][value=eng]').check();
  await vpn.locator('input[name=teams][value=ops]').check();
  await vpn.locator('button[type=submit]').click();
  const open = vpn.locator('#vpn_access-outcome a');
  await open.waitFor();
  report.vpnAsked = await home.locator('#vpn_access-outcome').textContent();
  await vpn.screenshot(card('vpn-asked'));
  report.linkTarget = await open.getAttribute('target');
  // The link points at the demo's BASE_URL, make run's address; this server listens on a port of its own.
  const link = new URL(await open.getAttribute('href'));
  const urlPage = watch(await context.newPage(), 'url-mode');
  await urlPage.goto(`${base}${link.pathname}`);
  report.urlPage = {
    prefilled: await urlPage.inputValue('#id_username'),
    checkboxes: await urlPage.locator('input[type=checkbox][name=teams]').count(),
    checked: await urlPage.locator('input[name=teams]:checked').evaluateAll((boxes) => boxes.map((box) => box.value)),
  };
  await urlPage.screenshot({ path: shot('url-mode-form'), fullPage: true });
  await urlPage.fill('#id_password', 'correct horse battery staple');
  await Promise.all([urlPage.waitForLoadState('load'), urlPage.click('button[type=submit]')]);
  await urlPage.locator('#mcpforms-done').waitFor();
  report.urlPage.done = (await urlPage.locator('#mcpforms-done').textContent()).replace(/\s+/g, ' ').trim();
  report.urlPage.values = await urlPage.locator('dl.summary').evaluate((list) =>
    Object.fromEntries([...list.querySelectorAll('dt')].map((term) => [term.textContent.trim(), term.nextElementSibling.textContent.trim()])),
  );
  await urlPage.screenshot({ path: shot('url-mode-done-light'), fullPage: true });
  await urlPage.emulateMedia({ colorScheme: 'dark' });
  await urlPage.screenshot({ path: shot('url-mode-done-dark'), fullPage: true });
  await urlPage.close();
  await vpn.locator('#vpn_access-outcome button').click();
  await home.locator('#vpn_access-outcome.outcome-done').waitFor();
  report.vpnResult = JSON.parse(await home.locator('#vpn_access-outcome pre').textContent());

  // The ui:// page of signup outside any host: read it over MCP, open it in a plain tab.
  const html = await home.evaluate(async () => {
    const config = JSON.parse(document.getElementById('demo-config').textContent);
    const response = await fetch(config.endpoint, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'MCP-Protocol-Version': config.protocolVersion,
        'Mcp-Method': 'resources/read',
        'Mcp-Name': 'ui://mcpforms/signup',
        'X-CSRFToken': config.csrfToken,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'resources/read',
        params: {
          uri: 'ui://mcpforms/signup',
          _meta: {
            'io.modelcontextprotocol/protocolVersion': config.protocolVersion,
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    return (await response.json()).result.contents[0].text;
  });
  const alone = watch(await context.newPage(), 'ui-alone');
  await alone.setContent(html);
  await alone.locator('#mcpforms-no-host:not([hidden])').waitFor();
  report.alone = {
    notice: (await alone.locator('#mcpforms-no-host').textContent()).replace(/\s+/g, ' ').trim(),
    submitDisabled: await alone.locator('button[type=submit]').isDisabled(),
  };
  await alone.screenshot({ path: shot('ui-outside-host'), fullPage: true });
  // In a frame whose parent never answers the handshake: the same message once the wait is over.
  await alone.setContent('<!DOCTYPE html><title>No host</title><iframe style="width:100%;height:700px;border:0"></iframe>');
  await alone.locator('iframe').evaluate((frame, page) => { frame.srcdoc = page; }, html);
  const framed = alone.frameLocator('iframe');
  await framed.locator('#mcpforms-no-host:not([hidden])').waitFor({ timeout: 10000 });
  report.framedDisabled = await framed.locator('button[type=submit]').isDisabled();
  await alone.close();
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
