import { existsSync } from 'node:fs';

/** Debian's Chromium, where .ci/run installs it. */
export const CHROMIUM = '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Browser tests skip only on a machine without Chromium, and never under CI, where it must be there. */
export const chromiumMissing = !existsSync(CHROMIUM) && !process.env.CI;
