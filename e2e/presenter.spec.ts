// Presenter mode for a lecture at 1280×720: 20 px body text, only the presenter charts, nothing
// wider than the screen (the Inspect tab and its walk-through included: the token table scrolls
// inside its own box), a header switch that works from the keyboard and stays in the link. In both
// languages and on every view: no box overflows sideways (the sidebar included), every control and
// the median text at least 20 px, no axis label cut; any chart fills the window and comes back.
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { traceToJson } from '../src/store/traceJson.ts';
import { fixtureTrace } from './inspectorFixture.ts';
import { measurePresenter } from './presenterMeasure.ts';
import { evalMessages, metricMessages, ratioMessage, SAMPLE_MESSAGE, send } from './trainerMessages.ts';

// The pages skip the trainer warm-up unless a test below asks for it (fixtures.ts).
test.use({ warmUp: false });

test.use({ viewport: { width: 1280, height: 720 } });
// The page loads WebGPU on SwiftShader before each check; a recorded history and every view add their own.
test.describe.configure({ timeout: 150_000 });

const PRESENTER_CHARTS = ['chart-reward_mean', 'chart-heldout', 'chart-clipfrac', 'chart-kl'];

async function shownCharts(page: Page): Promise<string[]> {
  return page.locator('figure.chart-card').evaluateAll((els) => els.map((e) => e.getAttribute('data-testid') ?? ''));
}

test('?present=1 at 1280×720: large type, the four presenter charts, no horizontal overflow', async ({ page }) => {
  await page.goto('/?present=1');
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  await expect(page.getByTestId('chart-reward_mean')).toBeVisible();
  const bodyPx = await page.evaluate(() => Number.parseFloat(getComputedStyle(document.body).fontSize));
  expect(bodyPx).toBeGreaterThanOrEqual(20);
  // The text a class reads, not only the body's default: each card's task, what to watch and promise.
  const cardTextPx = await page.locator('.preset-summary, .preset-watch, .preset-promise').evaluateAll((els) => els.map((e) => Number.parseFloat(getComputedStyle(e).fontSize)));
  expect(cardTextPx.length).toBeGreaterThan(0);
  expect(Math.min(...cardTextPx)).toBeGreaterThanOrEqual(20);
  expect((await shownCharts(page)).sort()).toEqual([...PRESENTER_CHARTS].sort());
  const overflow = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
  expect(overflow.scroll).toBeLessThanOrEqual(overflow.inner);
  // The teaching tabs are reachable without scrolling past a wall of charts.
  const tabsTop = await page
    .getByRole('tab')
    .first()
    .evaluate((e) => e.getBoundingClientRect().top + window.scrollY);
  expect(tabsTop).toBeLessThan(2 * 720);
  await expect(page.getByTestId('presenter-toggle')).toHaveAttribute('aria-checked', 'true');
  expect(page.url()).toContain('present=1');
});

/** How far the page is wider than the window (0 when nothing overflows sideways). */
const sidewaysOverflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

test('?present=1 at 1280×720 with the Inspect tab and its walk-through open: no horizontal overflow, ← / → step', async ({ page }) => {
  await page.addInitScript(() => localStorage.setItem('ppo-test-hooks', '1'));
  await page.goto('/?present=1');
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  await page.getByRole('tab', { name: 'Inspect' }).click();
  await page.evaluate((json) => (window.ppoPlayground as unknown as { pushTrace(j: unknown): void }).pushTrace(json), traceToJson(fixtureTrace()));
  await expect(page.locator('table.inspect-table')).toBeVisible();
  expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
  await page.getByRole('button', { name: 'Walk through this iteration' }).click();
  const walk = page.getByRole('region', { name: 'Walk-through' });
  await expect(walk).toBeFocused();
  const heading = walk.getByRole('heading');
  await expect(heading).toContainText('Step 1 of 8');
  for (const [key, step] of [
    ['ArrowRight', 2],
    ['ArrowRight', 3],
    ['ArrowRight', 4],
    ['ArrowLeft', 3],
  ] as const) {
    await page.keyboard.press(key);
    await expect(heading).toContainText(`Step ${step} of 8`);
    expect(await sidewaysOverflow(page), `at step ${step}`).toBeLessThanOrEqual(0);
  }
  // The reverse scan (step 4) was on screen: its strip scrolls inside, too.
  await page.keyboard.press('ArrowRight');
  await expect(page.getByRole('region', { name: /Reverse scan/ })).toBeVisible();
  expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
});

test('the header switch turns presenter mode on and off by keyboard, and the link follows', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('chart-reward_mean')).toBeVisible();
  expect((await shownCharts(page)).length).toBeGreaterThan(PRESENTER_CHARTS.length);
  const toggle = page.getByTestId('presenter-toggle');
  await toggle.focus();
  await page.keyboard.press('Space');
  await expect(toggle).toHaveAttribute('aria-checked', 'true');
  await expect.poll(() => page.evaluate(() => Number.parseFloat(getComputedStyle(document.body).fontSize))).toBeGreaterThanOrEqual(20);
  await expect.poll(async () => (await shownCharts(page)).sort()).toEqual([...PRESENTER_CHARTS].sort());
  await expect.poll(() => page.url()).toContain('present=1');
  // Remembered for the session: a reload without the parameter keeps it.
  await page.goto('/');
  await expect(page.getByTestId('presenter-toggle')).toHaveAttribute('aria-checked', 'true');
  await page.getByTestId('presenter-toggle').focus();
  await page.keyboard.press('Space');
  await expect(page.getByTestId('presenter-toggle')).toHaveAttribute('aria-checked', 'false');
  await expect.poll(() => page.url()).not.toContain('present=1');
  expect(await page.evaluate(() => Number.parseFloat(getComputedStyle(document.body).fontSize))).toBeLessThan(20);
});

/** Checks presenter mode's promises on the page as it is now (measurePresenter), naming what fails. */
async function expectPresenterFits(page: Page, where: string) {
  const m = await measurePresenter(page);
  expect(m.pageOverflow, `${where}: page wider than the window`).toBeLessThanOrEqual(0);
  expect(m.overflowing, `${where}: boxes with a sideways scrollbar`).toEqual([]);
  expect(m.smallControls, `${where}: controls under 20 px`).toEqual([]);
  expect(m.medianText, `${where}: median text (smallest: ${m.smallText.slice(0, 8).join('; ')})`).toBeGreaterThanOrEqual(20);
  expect(m.clippedTicks, `${where}: axis labels cut by their chart`).toEqual([]);
}

for (const lang of ['en', 'zh-CN'] as const) {
  test(`presenter mode at 1280×720 (${lang}): nothing overflows, every control and the median text ≥ 20 px, no axis label cut, on every view`, async ({ page }) => {
    test.setTimeout(180_000);
    await page.addInitScript(() => localStorage.setItem('ppo-test-hooks', '1'));
    await page.goto(`/?present=1&lang=${lang}`);
    await expect(page.getByTestId('gpu-status')).not.toHaveClass(/checking/, { timeout: 45_000 });
    // A recorded history puts points, ticks and notes on every chart, and a batch in the teaching views.
    await send(page, [...metricMessages(120), ...evalMessages(120, 10), ratioMessage(400), SAMPLE_MESSAGE]);
    await expect(page.getByTestId('chart-reward_mean').locator('path.recharts-line-curve')).toHaveCount(1);
    await expectPresenterFits(page, `${lang} main page`);
    const tabs = page.getByRole('tab');
    // The teaching views load lazily: wait for all six before walking them.
    await expect(tabs).toHaveCount(6);
    const n = 6;
    for (let i = 1; i < n; i++) {
      await tabs.nth(i).click();
      await expect(tabs.nth(i)).toHaveAttribute('aria-selected', 'true');
      if (i === n - 1) {
        await page.evaluate((json) => (window.ppoPlayground as unknown as { pushTrace(j: unknown): void }).pushTrace(json), traceToJson(fixtureTrace()));
        await page.locator('.inspect-actions .btn').first().click();
        await expect(page.locator('.walk-region')).toBeVisible();
      }
      await expectPresenterFits(page, `${lang} tab ${(await tabs.nth(i).textContent()) ?? i}`);
    }
  });
}

test('any chart fills the window and comes back, by keyboard too; its ticks stay inside it', async ({ page }) => {
  await page.goto('/?present=1');
  await expect(page.getByTestId('chart-reward_mean')).toBeVisible();
  await send(page, [...metricMessages(60), ...evalMessages(60, 10)]);
  for (const id of ['chart-reward_mean', 'chart-heldout']) {
    const card = page.getByTestId(id);
    const button = card.getByTestId('chart-fullscreen');
    await button.focus();
    await page.keyboard.press('Enter');
    await expect(card).toHaveClass(/fullscreen/);
    await expect(button).toHaveAttribute('aria-pressed', 'true');
    const box = (await card.boundingBox())!;
    expect(box.width).toBeGreaterThanOrEqual(1280 - 1);
    expect(box.height).toBeGreaterThanOrEqual(720 - 1);
    // The drawing grows with the window.
    await expect.poll(async () => (await card.locator('svg.recharts-surface').first().boundingBox())?.height ?? 0).toBeGreaterThan(450);
    expect((await measurePresenter(page)).clippedTicks).toEqual([]);
    await expect(button).toBeFocused();
    await page.keyboard.press('Escape');
    await expect(card).not.toHaveClass(/fullscreen/);
    await expect(button).toBeFocused();
    // Space toggles it as a button does, and the button brings it back.
    await page.keyboard.press('Space');
    await expect(card).toHaveClass(/fullscreen/);
    await button.click();
    await expect(card).not.toHaveClass(/fullscreen/);
  }
});
