// What every browser test of a Django admin page does the same way: signing in through the admin's
// login page, a picture of a whole page, and the errors a page makes.

// Sign in as `username` through the admin's login page and land on `next` (a path on the same site).
export async function signIn(page, base, username, password, next) {
  await page.goto(`${base}/admin/login/?next=${next}`);
  await page.fill('#id_username', username);
  await page.fill('#id_password', password);
  await Promise.all([page.waitForURL((url) => url.pathname === next), page.click('input[type=submit]')]);
}

// The whole page from the top, as the first screen shows it: the admin's sidebar is sticky and would
// follow a page scrolled down.
export async function shootWhole(page, file) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: file, fullPage: true });
}

// Collect into `errors` what a page does wrong: console errors (but Chromium's request for /favicon.ico,
// which the admin does not serve, is not the page's fault), uncaught exceptions and, unless told not to,
// every answer of 400 or more.
export function watchForErrors(page, errors, { failedResponses = true } = {}) {
  page.on('console', (message) => {
    const where = message.location().url;
    if (message.type() === 'error' && !where.endsWith('/favicon.ico')) errors.push(`${message.text()} ${where}`);
  });
  page.on('pageerror', (error) => errors.push(String(error)));
  if (failedResponses) {
    page.on('response', (response) => {
      if (response.status() >= 400) errors.push(`${response.status()} ${response.url()}`);
    });
  }
}
