// Draws the web app's PNG icons (public/icon-*.png, named in the manifest, vite.config.ts) from
// public/favicon.svg in headless Chromium: `npx tsx scripts/make-icons.ts`. The maskable icon fills
// the whole square (the launcher crops it) and keeps the line inside the central safe zone.
import { readFileSync } from 'node:fs';
import { chromium } from '@playwright/test';
import { CHROMIUM_PATH } from '../src/node/chromium.ts';

const favicon = readFileSync('public/favicon.svg', 'utf8');
const maskable =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 40"><rect width="40" height="40" fill="#4f46e5"/><path d="M10 26 L16 18 L21 22 L30 12" stroke="#fff" stroke-width="3" fill="none" stroke-linecap="round" stroke-linejoin="round"/></svg>';

const browser = await chromium.launch({ executablePath: CHROMIUM_PATH });
const page = await browser.newPage();
for (const [file, svg, size] of [
  ['public/icon-192.png', favicon, 192],
  ['public/icon-512.png', favicon, 512],
  ['public/icon-maskable-512.png', maskable, 512],
] as const) {
  await page.setViewportSize({ width: size, height: size });
  const sized = svg.replace('<svg ', `<svg width="${size}" height="${size}" `);
  await page.setContent(`<html><body style="margin:0;background:transparent">${sized}</body></html>`);
  await page.locator('svg').screenshot({ path: file, omitBackground: true });
}
await browser.close();
