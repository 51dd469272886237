import { expect, test } from './fixtures.ts';

// The pages skip the trainer warm-up unless a test below asks for it (fixtures.ts).
test.use({ warmUp: false });

test('page loads, finds a WebGPU adapter and shows the passed kernel self-test', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto('/');
  await expect(page.getByRole('heading', { name: 'PPO Playground' })).toBeVisible();
  const status = page.getByTestId('gpu-status');
  await expect(status).toContainText('WebGPU ready', { timeout: 45_000 });
  // The verdict and the adapter's own name sit in the badge's details; the headline says it in words.
  await expect(status.getByTestId('gpu-selftest')).toContainText('kernel self-test passed');
  // The adapter name is whatever the browser reports; it must be a real name, not the fallback.
  const adapter = ((await status.getByTestId('gpu-adapter').textContent()) ?? '').trim();
  expect(adapter.length).toBeGreaterThan(0);
  expect(adapter).not.toBe('unknown adapter');
  if (/swiftshader/i.test(adapter)) await expect(status.getByTestId('gpu-headline')).toHaveText('WebGPU ready · software GPU (SwiftShader): slower than a real GPU');
  else await expect(status.getByTestId('gpu-headline')).toContainText(adapter);
  const text = (await status.getByTestId('gpu-selftest').textContent()) ?? '';
  const err = Number(/max \|err\| ([0-9.e+-]+)/.exec(text)?.[1]);
  expect(err).toBeLessThan(1e-4);
  // The details open from the keyboard.
  await status.locator('summary').focus();
  await page.keyboard.press('Enter');
  await expect(status.getByTestId('gpu-adapter')).toBeVisible();
  // "About this GPU": the adapter's own words, and each limit the page uses with the values
  // needed, requested and offered.
  const about = status.getByTestId('gpu-about');
  await expect(about.getByRole('heading', { name: 'About this GPU' })).toBeVisible();
  await expect(about).toContainText('Fallback adapter');
  if (/swiftshader/i.test(adapter)) await expect(about).toContainText(/swiftshader/i);
  const limits = about.getByTestId('gpu-limits');
  await expect(limits.getByRole('columnheader', { name: 'This GPU' })).toBeVisible();
  for (const name of ['maxComputeWorkgroupStorageSize', 'maxComputeInvocationsPerWorkgroup', 'maxStorageBufferBindingSize']) {
    await expect(limits.getByRole('rowheader', { name })).toBeVisible();
  }
  await expect(limits.getByRole('row', { name: /maxComputeWorkgroupStorageSize/ })).toContainText('15,360');
  // Escape-free close: Enter on the summary again folds it.
  await page.keyboard.press('Enter');
  await expect(about).toBeHidden();
  await expect(page.getByTestId('no-webgpu')).toHaveCount(0);
  expect(errors).toEqual([]);
});
