// Works offline after one visit: the built page's service worker (vite-plugin-pwa, vite.config.ts)
// precaches the page, its bundled shaders, the QuickJS wasm and the checkpoints; with the network
// gone, a reload still opens the page and the real trainer trains an iteration.
import { expect, test } from '@playwright/test';

// The config blocks service workers for the other specs (playwright.config.ts).
test.use({ serviceWorkers: 'allow' });

const SMALL = '?promptsPerBatch=2&samplesPerPrompt=2&maxResponseLength=4&ppoEpochs=1&miniBatches=1';

test('after one visit the page loads and trains with the network off', async ({ page, context }) => {
  test.setTimeout(150_000);
  await page.goto(`/${SMALL}`);
  // The service worker is installed (its precache filled: install waits for every file) and active.
  const precached = await page.evaluate(async () => {
    const reg = await navigator.serviceWorker.ready;
    // ready resolves once a worker is active, which may still be 'activating': wait for the end
    const sw = reg.active;
    if (sw && sw.state !== 'activated') await new Promise<void>((done) => sw.addEventListener('statechange', () => sw.state === 'activated' && done()));
    const names = await caches.keys();
    const urls = await Promise.all(names.map(async (c) => (await (await caches.open(c)).keys()).map((r) => r.url)));
    return { active: reg.active?.state, urls: urls.flat() };
  });
  expect(precached.active).toBe('activated');
  expect(precached.urls.some((u) => u.includes('checkpoints/arithmetic.safetensors'))).toBe(true);
  expect(precached.urls.some((u) => /\.wasm/.test(u))).toBe(true);

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
