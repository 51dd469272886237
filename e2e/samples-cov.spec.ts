// The samples view outlines the tokens clip_cov / kl_cov acted on (SampleToken.covPicked, the
// trainer's own choice in the last minibatch step) and explains the outline in a legend, in both
// languages; without the field (every other loss mode) neither appears.
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { SAMPLE_MESSAGE, send } from './trainerMessages.ts';
import type { WorkerToPage } from '../src/worker/protocol.ts';

// The pages skip the trainer warm-up unless a test below asks for it (fixtures.ts).
test.use({ warmUp: false });

const COV_MESSAGE = {
  ...SAMPLE_MESSAGE,
  rows: (SAMPLE_MESSAGE as Extract<WorkerToPage, { type: 'samples' }>).rows.map((row, r) => ({
    ...row,
    tokens: row.tokens.map((t, j) => ({ ...t, covPicked: r === 1 && j === 2 })),
  })),
} as WorkerToPage;

async function open(page: Page, query: string) {
  await page.addInitScript(() => localStorage.setItem('ppo-test-hooks', '1'));
  await page.goto(`/${query}`);
  await expect(page.locator('[data-testid="gpu-status"].ok')).toBeVisible({ timeout: 45_000 });
}

for (const [lang, query, tab, legend] of [
  ['en', '', 'Samples', 'Outlined: the tokens Clip-Cov / KL-Cov chose'],
  ['zh-CN', '?lang=zh-CN', '样本', '描边：最后一个小批量步骤中'],
] as const) {
  test(`${lang}: the tokens clip_cov / kl_cov acted on are outlined, with a legend`, async ({ page }) => {
    await open(page, query);
    await send(page, [SAMPLE_MESSAGE]);
    await page.getByRole('tab', { name: tab, exact: true }).click();
    const view = page.getByTestId('view-samples');
    await expect(view.locator('.tok')).toHaveCount(7);
    await expect(view.locator('[data-cov-picked]')).toHaveCount(0);
    await expect(page.getByTestId('samples-cov-legend')).toHaveCount(0);
    await send(page, [COV_MESSAGE]);
    await expect(view.locator('[data-cov-picked]')).toHaveCount(1);
    await expect(view.locator('[data-cov-picked]')).toHaveCSS('outline-style', 'solid');
    await expect(page.getByTestId('samples-cov-legend')).toContainText(legend);
    await expect(page.getByTestId('samples-cov-legend')).toContainText('1');
  });
}
