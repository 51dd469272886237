// What a run looks like on the page, to compare a live run with the same run opened from its file:
// the reward chart's line as drawn (its SVG path), the held-out chart's lines, and the inspector's
// token table as text.
import { expect, type Page } from '@playwright/test';

export async function drawn(page: Page) {
  const line = page.getByTestId('chart-reward_mean').locator('path.recharts-line-curve');
  await expect(line).toHaveCount(1);
  const heldOut = page.getByTestId('chart-heldout').locator('path.recharts-line-curve');
  await page.getByRole('tab', { name: 'Inspect' }).click();
  const table = page.locator('table.inspect-table');
  await expect(table).toBeVisible();
  return {
    reward: await line.getAttribute('d'),
    heldOut: await heldOut.evaluateAll((ps) => ps.map((p) => p.getAttribute('d'))),
    table: await table.textContent(),
  };
}
