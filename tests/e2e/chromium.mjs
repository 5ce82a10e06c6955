// Debian's chromium through playwright-core, the one way every browser test starts it: never a browser a
// tool downloads, and nothing it does in the background (updates, sync, QUIC) to slow or flake a test.
import { chromium } from 'playwright-core';

export function launchChromium() {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
