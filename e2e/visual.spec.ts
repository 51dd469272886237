// Screenshot baselines of the main views, fed fixed recorded trainer messages through the test
// hook so every pixel is deterministic: fixed viewport, system fonts, no chart animations
// (recharts isAnimationActive={false}; CSS animations are stopped by toHaveScreenshot), and the
// GPU badge masked because it names the adapter. Regenerate with
// `npx playwright test e2e/visual.spec.ts --update-snapshots` after an intended UI change.
import type { Page } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH, SOFTWARE_COMPOSITING } from '../src/node/chromium.ts';
import { expect, test } from './fixtures.ts';
import { evalMessages, metricMessages, ratioMessage, SAMPLE_MESSAGE, send } from './trainerMessages.ts';

// The pages skip the trainer warm-up unless a test below asks for it (fixtures.ts).
test.use({ warmUp: false });

test.use({ viewport: { width: 1360, height: 900 }, deviceScaleFactor: 1, colorScheme: 'light', reducedMotion: 'reduce' });
// The baselines were drawn with GL compositing, the one whose pixels repeat run after run (chromium.ts).
test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS.filter((a) => a !== SOFTWARE_COMPOSITING) } });

async function openPage(page: Page) {
  await page.goto('/');
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  await page.evaluate(() => document.fonts.ready);
}

// The whole page without the trainer's warm-up (its background compilation made the preset cards'
// text differ between runs on a loaded machine); the line naming the trainer's backend, which the
// warm-up fills in with the adapter's name, is masked like the GPU badge.
// The English preset cards are masked too: their text is rastered one of two ways from run to run
// (4 908 pixels apart, every layout box identical to the hundredth of a pixel, 2026-11-29), busy
// machine or not. The cards keep their screenshots in Chinese below and on the phone and tablet
// (mobile.spec.ts), and their words are checked as text (presets.spec.ts).
test('controls and settings before training', async ({ page }) => {
  await openPage(page);
  await expect(page).toHaveScreenshot('page-idle.png', { mask: [page.getByTestId('gpu-status'), page.getByTestId('trainer-backend'), page.locator('.preset-card')] });
});

test('training curves from a recorded history of two runs', async ({ page }) => {
  await openPage(page);
  await send(page, [...metricMessages(300), ...evalMessages(300, 25)]);
  await page.getByRole('button', { name: 'Reset', exact: true }).click();
  await send(page, [...metricMessages(120, 0.4, 5), ...evalMessages(120, 10, 0.2)]);
  const charts = page.locator('section.charts');
  await expect(page.getByTestId('chart-reward_mean').locator('path.recharts-line-curve')).toHaveCount(2);
  // Held-out: a sampled and a greedy line per run.
  await expect(page.getByTestId('chart-heldout').locator('path.recharts-line-curve')).toHaveCount(4);
  // Charts below the fold redraw only when scrolled into view (or within 2 s): wait until every
  // metric chart shows both runs, or the screenshot catches some of them before run #2 arrives.
  for (const chart of await charts.locator('figure.chart-card[data-testid^="chart-"]:not([data-testid="chart-heldout"])').all()) {
    await chart.scrollIntoViewIfNeeded();
    await expect(chart.locator('path.recharts-line-curve')).toHaveCount(2);
  }
  await page.evaluate(() => window.scrollTo(0, 0));
  await expect(charts).toHaveScreenshot('charts.png');
});

test('clipping view with a fixed ratios message', async ({ page }) => {
  await openPage(page);
  await send(page, [ratioMessage(400)]);
  const view = page.getByTestId('view-clipping');
  await expect(view).toContainText('ratios of iteration 42');
  await expect(page.locator('section.teaching')).toHaveScreenshot('clipping.png');
});

test('KL shaping and samples views with a fixed samples message', async ({ page }) => {
  await openPage(page);
  await send(page, [SAMPLE_MESSAGE]);
  await page.getByRole('tab', { name: 'KL shaping' }).click();
  await expect(page.getByTestId('view-kl').getByTestId('kl-token')).toHaveCount(3);
  await expect(page.locator('section.teaching')).toHaveScreenshot('kl-shaping.png');
  await page.getByRole('tab', { name: 'Samples', exact: true }).click();
  await expect(page.getByTestId('view-samples').locator('.tok')).toHaveCount(7);
  await expect(page.locator('section.teaching')).toHaveScreenshot('samples.png');
});

test('the no-WebGPU guide', async ({ page }) => {
  await page.addInitScript(() => {
    Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined, configurable: true });
  });
  await page.goto('/');
  await expect(page.getByTestId('no-webgpu')).toBeVisible({ timeout: 45_000 });
  await page.evaluate(() => document.fonts.ready);
  await expect(page).toHaveScreenshot('no-webgpu.png');
});

// The same views in Simplified Chinese (?lang=zh-CN, the CJK font from fonts-noto-cjk): the
// baselines a reviewer reads for clipped or overflowing Chinese text.
async function openChinese(page: Page) {
  await page.goto('/?lang=zh-CN');
  await expect(page.locator('[data-testid="gpu-status"].ok')).toBeVisible({ timeout: 45_000 });
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
  await page.evaluate(() => document.fonts.ready);
}

test('zh-CN: controls and settings before training', async ({ page }) => {
  await openChinese(page);
  await expect(page.getByTestId('chart-reward_mean')).toBeVisible();
  await expect(page).toHaveScreenshot('page-idle.zh-CN.png', { mask: [page.getByTestId('gpu-status'), page.getByTestId('trainer-backend')] });
});

test('zh-CN: each teaching view', async ({ page }) => {
  await openChinese(page);
  await send(page, [ratioMessage(400), SAMPLE_MESSAGE]);
  const teaching = page.locator('section.teaching');
  for (const [id, ready] of [
    ['clipping', () => expect(page.getByTestId('view-clipping')).toContainText('42')],
    ['kl', () => expect(page.getByTestId('view-kl').getByTestId('kl-token')).toHaveCount(3)],
    ['samples', () => expect(page.getByTestId('view-samples').locator('.tok')).toHaveCount(7)],
    ['policies', () => expect(page.getByTestId('view-policies')).toBeVisible()],
    ['feedback', () => expect(page.getByTestId('view-feedback')).toBeVisible()],
    ['inspect', () => expect(page.getByRole('button', { name: '训练一步并检查' })).toBeVisible()],
  ] as const) {
    await page.locator(`#tab-${id}`).click();
    await expect(page.locator(`#tab-${id}`)).toHaveAttribute('aria-selected', 'true');
    await ready();
    await expect(teaching).toHaveScreenshot(`teach-${id}.zh-CN.png`);
  }
});
