import { expect, test } from '@playwright/test';

test('page loads, finds a WebGPU adapter and shows the passed kernel self-test', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto('/');
  await expect(page.getByRole('heading', { name: 'PPO Playground' })).toBeVisible();
  const status = page.getByTestId('gpu-status');
  await expect(status).toContainText('WebGPU ready', { timeout: 45_000 });
  await expect(status).toContainText('kernel self-test passed');
  // The adapter name is whatever the browser reports; it must be a real name, not the fallback.
  const text = (await status.textContent()) ?? '';
  const adapter = text.split('—')[1]?.trim() ?? '';
  expect(adapter.length).toBeGreaterThan(0);
  expect(adapter).not.toBe('unknown adapter');
  const err = Number(/max \|err\| ([0-9.e+-]+)/.exec(text)?.[1]);
  expect(err).toBeLessThan(1e-4);
  await expect(page.getByTestId('no-webgpu')).toHaveCount(0);
  expect(errors).toEqual([]);
});
