// Keyboard and screen readers (issue #26): the skip link comes first and moves focus to the
// charts, the teaching tabs follow the WAI-ARIA tabs pattern, the charts carry a text summary and
// the live region says when training starts and pauses.
import { expect, test } from './fixtures.ts';
import { metricMessages, send } from './trainerMessages.ts';

// The pages skip the trainer warm-up unless a test below asks for it (fixtures.ts).
test.use({ warmUp: false });

const TINY = '?promptsPerBatch=2&samplesPerPrompt=2&maxResponseLength=4&ppoEpochs=1&miniBatches=1';

test.beforeEach(async ({ page }) => {
  await page.goto(`/${TINY}`);
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  await expect(page.getByRole('tab', { name: 'Clipping' })).toBeVisible();
});

test('the first Tab reaches the skip link, shown on focus, and it moves focus to the charts', async ({ page }) => {
  const skip = page.getByRole('link', { name: 'Skip to charts and views' });
  await expect(skip).not.toBeInViewport();
  await page.keyboard.press('Tab');
  await expect(skip).toBeFocused();
  await expect(skip).toBeInViewport();
  await page.keyboard.press('Enter');
  await expect(page.locator('#charts-and-views')).toBeFocused();
  // The next Tab goes on inside the charts and views, not back to the header or the settings.
  await page.keyboard.press('Tab');
  expect(await page.evaluate(() => document.getElementById('charts-and-views')!.contains(document.activeElement))).toBe(true);
});

test('the teaching tabs are one Tab stop, driven by the arrow keys, Home and End', async ({ page }) => {
  const tabs = page.getByRole('tablist', { name: 'Teaching views' }).getByRole('tab');
  await expect(tabs).toHaveCount(6);
  await expect(page.locator('[role=tab][tabindex="0"]')).toHaveCount(1);
  await page.getByRole('tab', { name: 'Clipping' }).focus();
  await page.keyboard.press('ArrowRight');
  const kl = page.getByRole('tab', { name: 'KL shaping' });
  await expect(kl).toBeFocused();
  await expect(kl).toHaveAttribute('aria-selected', 'true');
  await expect(kl).toHaveAttribute('tabindex', '0');
  await expect(page.getByRole('tab', { name: 'Clipping' })).toHaveAttribute('tabindex', '-1');
  await expect(page.locator('[role=tab][tabindex="0"]')).toHaveCount(1);
  await expect(page.getByRole('tabpanel', { name: 'KL shaping' })).toBeVisible();
  await page.keyboard.press('End');
  await expect(page.getByRole('tab', { name: 'Inspect' })).toBeFocused();
  await expect(page.getByRole('tab', { name: 'Inspect' })).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('ArrowRight');
  await expect(page.getByRole('tab', { name: 'Clipping' })).toBeFocused();
  await page.keyboard.press('ArrowLeft');
  await expect(page.getByRole('tab', { name: 'Inspect' })).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('Home');
  await expect(page.getByRole('tab', { name: 'Clipping' })).toHaveAttribute('aria-selected', 'true');
  // Tab leaves the list for the panel's content rather than walking through the other tabs.
  await page.keyboard.press('Tab');
  expect(await page.evaluate(() => document.activeElement?.getAttribute('role'))).not.toBe('tab');
});

test('each chart carries a text summary of the last value and trend', async ({ page }) => {
  await expect(page.getByTestId('chart-summary-reward_mean')).toHaveText('Reward: no data yet.');
  await send(page, metricMessages(20));
  const summary = page.getByTestId('chart-summary-reward_mean');
  await expect(summary).toContainText(/^Reward: .+ last -?[\d.e+-]+ at iteration 19, (rising|falling|flat) over the last 10 iterations\.$/);
  await expect(page.getByTestId('chart-reward_mean')).toHaveAccessibleDescription(/Reward: .* at iteration 19/);
});

// It presses Start: the page warms the trainer up as a visitor’s does.
test.describe(() => {
  test.use({ warmUp: true });
  test('the live region says when training starts and pauses, and why (a NaN, a lost device)', async ({ page }) => {
    const live = page.getByTestId('announcer');
    await expect(live).toHaveAttribute('aria-live', 'polite');
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await expect(live).toHaveText('Training started.');
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await expect(live).toHaveText('Training paused.');
    await send(page, [{ type: 'paused', reason: 'a non-finite loss' }]);
    await expect(live).toHaveText(/Paused: a non-finite loss/);
    await send(page, [{ type: 'deviceLost', reason: 'a test', iter: 3 }]);
    await expect(live).toContainText('The GPU device was lost (a test) after 3 iterations');
  });
});
