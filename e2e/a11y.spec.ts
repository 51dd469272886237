// Accessibility audit with axe-core (WCAG 2 A and AA rules) of the page as a student meets it:
// idle, with the tour's invitation and the tour open, on every teaching tab, and after a few
// training iterations have filled the charts and views; the Inspect tab also with a trace loaded
// and its walk-through open. Fails on any serious or critical violation. No rule is excluded.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { traceToJson } from '../src/store/traceJson.ts';
import { fixtureTrace } from './inspectorFixture.ts';

// The pages skip the trainer warm-up unless a test below asks for it (fixtures.ts).
test.use({ warmUp: false });

const TINY = '?promptsPerBatch=2&samplesPerPrompt=2&maxResponseLength=4&ppoEpochs=1&miniBatches=1';
const TABS = ['Clipping', 'KL shaping', 'Samples', 'Three policies', 'Human feedback', 'Inspect'];
/** The teaching section: its tab list, the tab's panel and the offers above them. */
const TEACHING = 'section.teaching';

async function open(page: Page, query = '') {
  await page.goto(`/${query}`);
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  await expect(page.getByTestId('chart-reward_mean')).toBeVisible();
  await expect(page.getByRole('tab', { name: 'Clipping' })).toBeVisible();
}

/**
 * Waits for every finite animation and transition on the page to end: axe reads the colours of one
 * moment, and a moment inside a fade or a colour change is not what the page settles on.
 */
async function settled(page: Page): Promise<void> {
  await page.evaluate(() =>
    Promise.all(
      document
        .getAnimations()
        .filter((a) => a.effect?.getComputedTiming().endTime !== Number.POSITIVE_INFINITY)
        .map((a) => a.finished.catch(() => undefined)),
    ),
  );
}

/**
 * Serious and critical violations, one line each: rule, impact, and the first few elements. With
 * `within`, only that part of the page is audited (the rest was audited in the same state).
 */
async function audit(page: Page, within?: string): Promise<string[]> {
  await settled(page);
  const axe = new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa']);
  const results = await (within ? axe.include(within) : axe).analyze();
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} — ${v.nodes.length} element(s): ${v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(' '))
          .join(' | ')}`,
    );
}

test('the idle page has no serious or critical violation', async ({ page }) => {
  // axe walks the whole page twice; on a loaded machine with SwiftShader that takes minutes.
  test.setTimeout(240_000);
  await open(page);
  expect(await audit(page)).toEqual([]);
  // The badge's details, opened.
  await page.getByTestId('gpu-status').locator('summary').click();
  expect(await audit(page, '[data-testid="gpu-status"]')).toEqual([]);
});

test('the tour invitation and the open tour have no serious or critical violation', async ({ page }) => {
  test.setTimeout(300_000);
  await page.addInitScript(() => Object.defineProperty(Navigator.prototype, 'webdriver', { get: () => false }));
  await open(page);
  await expect(page.getByTestId('tour-invite')).toBeVisible();
  expect(await audit(page)).toEqual([]);
  // Every frame while the tour opens and moves, as a person sees it: the popover at full opacity
  // and the Next button in its settled colours (the audits below read only settled moments).
  await page.evaluate(() => {
    const frames: { opacity: number; color: string; background: string }[] = [];
    (window as unknown as { tourFrames: typeof frames }).tourFrames = frames;
    const record = () => {
      const popover = document.querySelector<HTMLElement>('.driver-popover.ppo-tour');
      const next = popover?.querySelector<HTMLElement>('.driver-popover-next-btn');
      if (popover && next && getComputedStyle(popover).display !== 'none') {
        let opacity = 1;
        for (let e: HTMLElement | null = next; e; e = e.parentElement) opacity *= Number(getComputedStyle(e).opacity);
        frames.push({ opacity, color: getComputedStyle(next).color, background: getComputedStyle(next).backgroundColor });
      }
      if (!document.body.dataset.tourFramesDone) requestAnimationFrame(record);
    };
    requestAnimationFrame(record);
  });
  await page.getByTestId('tour-invite').getByRole('button', { name: 'Take the tour' }).click();
  await expect(page.getByTestId('tour-popover')).toHaveAttribute('data-settled', 'loop');
  expect(await audit(page)).toEqual([]);
  // A step pointing at a chart, further down the page.
  // Each key is pressed only once the step before has settled: driver.js drops keys pressed while
  // a step is moving, and a new popover carries no settled mark until its move has finished.
  for (const id of ['experiments', 'start', 'reward']) {
    await page.keyboard.press('ArrowRight');
    await expect(page.getByTestId('tour-popover')).toHaveAttribute('data-settled', id, { timeout: 90_000 });
  }
  expect(await audit(page)).toEqual([]);
  const frames = await page.evaluate(() => {
    document.body.dataset.tourFramesDone = '1';
    return (window as unknown as { tourFrames: { opacity: number; color: string; background: string }[] }).tourFrames;
  });
  expect(frames.length).toBeGreaterThan(0);
  const last = frames[frames.length - 1];
  expect(frames.filter((f) => f.opacity < 1 || f.color !== last.color || f.background !== last.background)).toEqual([]);
});

// It trains: the page warms the trainer up as a visitor’s does.
test.describe(() => {
  test.use({ warmUp: true });
  test('every teaching tab has no serious or critical violation, before and after training', async ({ page }) => {
    test.setTimeout(480_000);
    await open(page, TINY);
    // The whole page once in each state; a tab changes only the teaching section, which is
    // audited on every tab.
    expect(await audit(page), 'before training').toEqual([]);
    for (const tab of TABS) {
      await page.getByRole('tab', { name: tab }).click();
      await expect(page.getByRole('tab', { name: tab })).toHaveAttribute('aria-selected', 'true');
      expect(await audit(page, TEACHING), `${tab}, before training`).toEqual([]);
    }
    // A few iterations fill the charts, the samples and the clipping histograms.
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await expect
      .poll(async () => Number(/(\d+) it/.exec((await page.getByTestId('run-list').getByRole('listitem').first().textContent()) ?? '')?.[1] ?? 0), { timeout: 120_000 })
      .toBeGreaterThanOrEqual(3);
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await expect(page.getByTestId('run-state')).toHaveText('Paused', { timeout: 60_000 });
    expect(await audit(page), 'after training').toEqual([]);
    for (const tab of TABS) {
      await page.getByRole('tab', { name: tab }).click();
      expect(await audit(page, TEACHING), `${tab}, after training`).toEqual([]);
    }
  });
});

test('the Inspect tab with a trace loaded, and with its walk-through open, has no serious or critical violation', async ({ page }) => {
  test.setTimeout(300_000);
  await page.addInitScript(() => localStorage.setItem('ppo-test-hooks', '1'));
  await open(page);
  await page.getByRole('tab', { name: 'Inspect' }).click();
  await page.evaluate((json) => (window.ppoPlayground as unknown as { pushTrace(j: unknown): void }).pushTrace(json), traceToJson(fixtureTrace()));
  await expect(page.locator('table.inspect-table')).toBeVisible();
  expect(await audit(page), 'Inspect, trace loaded').toEqual([]);
  await page.getByRole('button', { name: 'Walk through this iteration' }).click();
  const walk = page.getByRole('region', { name: 'Walk-through' });
  await expect(walk).toBeFocused();
  // The reward-shaping step highlights columns of the table, the advantages step shows the scan.
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await expect(walk.getByRole('heading')).toContainText('Reward shaping');
  expect(await audit(page, TEACHING), 'Inspect, walk-through at reward shaping').toEqual([]);
  await page.keyboard.press('ArrowRight');
  await expect(page.getByRole('region', { name: /Reverse scan/ })).toBeVisible();
  expect(await audit(page, TEACHING), 'Inspect, walk-through at the reverse scan').toEqual([]);
});
