// Two steps every browser test of a Django admin page takes the same way: signing in through the admin's
// login page, and a picture of a whole page.

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
