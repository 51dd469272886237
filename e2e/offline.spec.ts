// Works offline after one visit: the built page's service worker (vite-plugin-pwa, vite.config.ts)
// precaches the page, its bundled shaders, the QuickJS wasm, the checkpoints and the cards' recorded
// runs; with the network
// gone, a reload still opens the page and the real trainer trains an iteration.
import { readdirSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { precached } from './serviceWorker.ts';

// The config blocks service workers for the other specs (playwright.config.ts).
test.use({ serviceWorkers: 'allow' });

const SMALL = '?promptsPerBatch=2&samplesPerPrompt=2&maxResponseLength=4&ppoEpochs=1&miniBatches=1';

test('after one visit the page loads and trains with the network off', async ({ page, context }) => {
  test.setTimeout(150_000);
  await page.goto(`/${SMALL}`);
  const cache = await precached(page);
  expect(cache.active).toBe('activated');
  expect(cache.urls.some((u) => u.includes('checkpoints/arithmetic.safetensors'))).toBe(true);
  expect(cache.urls.some((u) => /\.wasm/.test(u))).toBe(true);
  // every card's recorded run (public/runs/presets/)
  expect(cache.urls.filter((u) => u.includes('runs/presets/'))).toHaveLength(readdirSync('public/runs/presets').length);

  await context.setOffline(true);
  await page.reload();
  expect(await page.evaluate(() => navigator.serviceWorker.controller !== null)).toBe(true);
  expect(await page.evaluate(() => navigator.onLine)).toBe(false);
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 30_000 });
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await expect(page.getByTestId('run-state')).toHaveText('Training');
  const chip = page.getByTestId('run-list').getByRole('listitem').first();
  await expect(chip).toContainText(/[1-9]\d* it/, { timeout: 60_000 });
  await expect(page.getByTestId('notice')).toHaveCount(0);
  await context.setOffline(false);
});
