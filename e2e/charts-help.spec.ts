// Every chart explains itself ("?": formula, healthy and sick curves, verl / OpenRLHF names), the
// coefficient the adaptive controller moves is charted, and a chart that is zero by construction
// says so instead of magnifying float32 rounding.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import type { WorkerToPage } from '../src/worker/protocol.ts';
import { metricMessages, send } from './trainerMessages.ts';

// The pages skip the trainer warm-up unless a test below asks for it (fixtures.ts).
test.use({ warmUp: false });

// The page waits for WebGPU on SwiftShader, then KaTeX and an axe audit: on a loaded machine that
// is more than the default minute.
test.describe.configure({ timeout: 180_000 });

async function open(page: Page, query = '') {
  await page.goto(`/${query}`);
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  await expect(page.getByTestId('chart-reward_mean')).toBeVisible();
}

test('each chart has a "?" that opens by keyboard, typesets its formula, names the engines’ metrics and closes with Escape', async ({ page }) => {
  await open(page);
  const figures = page.locator('figure.chart-card');
  const count = await figures.count();
  expect(count).toBeGreaterThanOrEqual(12);
  await expect(page.locator('figure.chart-card .help-toggle')).toHaveCount(count);

  const toggle = page.getByTestId('chart-help-clipfrac');
  await toggle.focus();
  await page.keyboard.press('Enter');
  await expect(toggle).toHaveAttribute('aria-expanded', 'true');
  const panel = page.getByTestId('chart-help-panel-clipfrac');
  await expect(panel).toContainText('actor/pg_clipfrac');
  await expect(panel).toContainText('ppo_clip_ratio');
  await expect(panel).toContainText('Healthy');
  await expect(panel).toContainText('Sick');
  // KaTeX arrives lazily and replaces the plain-text reading, with MathML for screen readers.
  await expect(panel.locator('.katex-html')).toBeVisible();
  await expect(panel.locator('math')).toHaveCount(1);

  const axe = await new AxeBuilder({ page }).include('[data-testid="chart-help-panel-clipfrac"]').analyze();
  expect(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);

  await page.keyboard.press('Escape');
  await expect(panel).toHaveCount(0);
  await expect(toggle).toBeFocused();
  await expect(toggle).toHaveAttribute('aria-expanded', 'false');

  // A tap elsewhere closes it too; the held-out chart has one as well.
  await page.getByTestId('chart-help-heldout').click();
  await expect(page.getByTestId('chart-help-panel-heldout')).toBeVisible();
  await page.getByRole('heading', { name: 'Training curves' }).click();
  await expect(page.getByTestId('chart-help-panel-heldout')).toHaveCount(0);
});

test('a KL-loss run charts the coefficient the adaptive controller moves, not a flat β', async ({ page }) => {
  await open(page, '?klController=adaptive&klInReward=false&useKlLoss=true&klLossCoef=0.05');
  await expect(page.getByTestId('chart-kl_loss_coef')).toBeVisible();
  await expect(page.getByTestId('chart-kl_loss')).toBeVisible();
  await expect(page.getByTestId('chart-beta')).toHaveCount(0);
  const msgs: WorkerToPage[] = metricMessages(30).map((m) =>
    m.type === 'metrics' ? { ...m, values: { ...m.values, beta: 0, kl_loss_coef: 0.05 * 0.98 ** m.iter, kl_loss: 0.01 * m.iter } } : m,
  );
  await send(page, msgs);
  await expect(page.getByTestId('chart-kl_loss_coef').locator('path.recharts-line-curve')).toHaveCount(1);
  await expect(page.getByTestId('chart-note-kl_loss_coef')).toContainText('Adaptive KL');
});

test('"Rollout vs old KL" keeps a fixed band when it is zero by construction', async ({ page }) => {
  await open(page);
  const msgs: WorkerToPage[] = metricMessages(20).map((m) => (m.type === 'metrics' ? { ...m, values: { ...m.values, rollout_old_kl: (m.iter % 3) * 1e-8 } } : m));
  await send(page, msgs);
  const chart = page.getByTestId('chart-rollout_old_kl');
  await expect(page.getByTestId('chart-note-rollout_old_kl')).toContainText('float32 rounding');
  // The axis reads ±0.01, not ±1e-8.
  await expect.poll(() => chart.locator('.recharts-cartesian-axis-tick-value').allTextContents()).toEqual(expect.arrayContaining(['-0.01', '0.01']));
});
