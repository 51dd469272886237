// A run file holds the trainer's state (#34): a run trained here and saved with ⤓ carries the
// state the page keeps for resuming; opened in a fresh browser, "Continue training from iteration
// k" loads it and the same run trains on from k, no longer marked recorded, its stored record one
// contiguous series growing past k.
import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { contiguous, iterations, pausedStateSaved, stored, trainUntilStateAt } from './storedState.ts';

test('a saved run with its trainer state continues in another browser from the state’s iteration', async ({ page, browser }) => {
  test.setTimeout(300_000);
  await trainUntilStateAt(page, 2);
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await expect(page.getByTestId('run-state')).toHaveText('Paused', { timeout: 60_000 });
  // Pause saves the state of the iteration it let finish.
  expect((await pausedStateSaved(page)).state!.iter).toBeGreaterThanOrEqual(2);
  const k = (await stored(page)).state!.iter;
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: /^Save .* as a run file$/ }).click()]);
  const text = readFileSync((await download.path())!, 'utf8');
  expect((JSON.parse(text) as { state: { iter: number } }).state.iter).toBe(k);
  await expect(page.getByTestId('notice')).toContainText(`the trainer’s state at iteration ${k}`);

  const context = await browser.newContext({ viewport: page.viewportSize()!, serviceWorkers: 'block' });
  const other = await context.newPage();
  await other.goto('/');
  await expect(other.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 30_000 });
  await other.getByTestId('open-run-input').setInputFiles({ name: 'class-run.json', mimeType: 'application/json', buffer: Buffer.from(text) });
  const chip = other.getByTestId('run-list').getByRole('listitem');
  await expect(chip).toHaveCount(1);
  await expect(chip.getByTestId('recorded-badge')).toBeVisible();
  await expect(other.getByTestId('notice')).toContainText(`“Continue training” goes on from there`);
  await chip.getByTestId('continue-recorded').click();
  await expect(other.getByTestId('run-state')).toHaveText('Training', { timeout: 60_000 });
  await expect(chip.getByTestId('recorded-badge')).toHaveCount(0);
  await expect(chip.getByTestId('continue-recorded')).toHaveCount(0);
  await expect(other.getByTestId('notice')).toContainText('Resumed');
  await expect.poll(() => iterations(other), { timeout: 120_000 }).toBeGreaterThan(k + 1);
  await other.getByRole('button', { name: 'Pause', exact: true }).click();
  await expect(other.getByTestId('run-state')).toHaveText('Paused', { timeout: 60_000 });
  // One run, its record 0, 1, …: the file's first k iterations, then the ones trained here.
  await expect
    .poll(
      async () => {
        const now = await stored(other);
        return now.runs.length === 1 && contiguous(now.runs[0].iters) ? now.runs[0].iters.length : -1;
      },
      { timeout: 60_000 },
    )
    .toBeGreaterThan(k + 1);
  await expect(other.locator('[data-testid="notice"].error')).toHaveCount(0);
  await context.close();
});
