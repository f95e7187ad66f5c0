// Debian's chromium, headless, driven by playwright-core, for the web console's browser tests and
// bench. Each launch gets a fresh profile (playwright makes one per launch); nothing reaches the
// network: background services, updates and QUIC are off.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Why browser tests cannot run here, or undefined when they can. */
export function browserMissing(): string | undefined {
  return existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is not installed (apt-get install chromium)`;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
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

/** Controls that a screen reader would announce without a name, from the page's aria snapshot. */
export async function unnamedControls(page: Page): Promise<string[]> {
  const snapshot = await page.locator('body').ariaSnapshot();
  return snapshot
    .split('\n')
    .filter((l) => /^\s*- (button|textbox|searchbox|checkbox|combobox|link|spinbutton|radio|slider|tab)(\s*\[[^\]]*\])?:?\s*$/.test(l))
    .map((l) => l.trim());
}
