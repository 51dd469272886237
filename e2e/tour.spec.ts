// The guided tour: a first visit gets a small invitation that blocks nothing; the tour walks its
// steps by keyboard (→ / ← / Esc), each pointing at a real part of the page, shows the chosen
// preset's "what to watch" line at Start, is remembered once done, comes back from the header's
// Tour button, survives a storage that throws, and fits a phone screen.
// A browser driven by automation gets no invitation (so the other specs see the page as before);
// these tests pose as a person's browser where they need the first-visit path.
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import tourEn from '../src/i18n/locales/en/tour.json' with { type: 'json' };
import { PRESETS } from '../src/rl/presets.ts';
import { TOUR_STEPS } from '../src/ui/tour/steps.ts';

// The pages skip the trainer warm-up unless a test below asks for it (fixtures.ts).
test.use({ warmUp: false });

const asPerson = (page: Page) => page.addInitScript(() => Object.defineProperty(Navigator.prototype, 'webdriver', { get: () => false }));

async function open(page: Page) {
  await page.goto('/');
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  // The anchors of the later steps arrive with the lazily loaded charts and teaching views.
  await expect(page.getByTestId('chart-reward_mean')).toBeVisible();
  await expect(page.getByRole('tab', { name: 'Clipping' })).toBeVisible();
}

const popover = (page: Page) => page.getByTestId('tour-popover');

/**
 * Waits until the tour rests on `id` (driver.js drops keys pressed while a step is moving). A step
 * moves on animation frames, which SwiftShader delays while the trainer is busy on the same
 * software GPU (after a preset click the worker prepares its first rollout): hence the long wait.
 */
const atStep = (page: Page, id: string) => expect(popover(page)).toHaveAttribute('data-settled', id, { timeout: 90_000 });

test('a first visit is invited, walks every step by keyboard, and is not invited again', async ({ page }) => {
  test.setTimeout(300_000);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await asPerson(page);
  await open(page);
  const invite = page.getByTestId('tour-invite');
  await expect(invite).toBeVisible();
  await expect(invite).toContainText(`${TOUR_STEPS.length}-step tour`);
  // Non-modal: the page still works under it.
  await page.getByRole('tab', { name: 'KL shaping' }).click();
  await expect(page.getByRole('tab', { name: 'KL shaping' })).toHaveAttribute('aria-selected', 'true');

  await invite.getByRole('button', { name: 'Take the tour' }).click();
  await expect(invite).toHaveCount(0);
  for (const [i, step] of TOUR_STEPS.entries()) {
    await atStep(page, step.id);
    await expect(popover(page).locator('.driver-popover-title')).toHaveText(tourEn.steps[step.id as keyof typeof tourEn.steps].title);
    await expect(popover(page)).toContainText(`Step ${i + 1} of ${TOUR_STEPS.length}`);
    // Each step lights up a real element of the page, not the centred fallback.
    await expect(page.locator('#driver-dummy-element')).toHaveCount(0);
    await expect(page.locator('.driver-active-element')).toHaveCount(1);
    if (i === 1) {
      await page.keyboard.press('ArrowLeft');
      await atStep(page, TOUR_STEPS[0].id);
      await page.keyboard.press('ArrowRight');
      await atStep(page, step.id);
    }
    // The page's own shortcuts stay quiet behind the tour (S would train an iteration, R reset).
    if (i === 2) {
      await page.keyboard.press('s');
      await page.waitForTimeout(1_000);
      await expect(page.getByTestId('run-state')).toHaveText('Idle');
      await expect(page.getByTestId('run-list-empty')).toBeVisible();
    }
    if (i < TOUR_STEPS.length - 1) await page.keyboard.press('ArrowRight');
  }
  await expect(popover(page).getByRole('button', { name: 'Done' })).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(popover(page)).toHaveCount(0);
  await expect(page.locator('.driver-overlay')).toHaveCount(0);
  expect(await page.evaluate(() => localStorage.getItem('ppo-playground-tour'))).toBe('done');

  // With an experiment chosen, the Start step says what to watch in it (the card's own line).
  const chosen = PRESETS[0];
  await page.getByRole('button', { name: chosen.name, exact: true }).click();
  await expect(page.getByTestId(`preset-card-learn-arithmetic`).getByTestId('preset-watch')).toHaveText(chosen.watch);
  await page.getByRole('button', { name: 'Tour', exact: true }).click();
  for (const step of TOUR_STEPS.slice(0, 2)) {
    await atStep(page, step.id);
    await page.keyboard.press('ArrowRight');
  }
  await atStep(page, 'start');
  await expect(popover(page)).toContainText(`With “${chosen.name}”: ${chosen.watch}`);
  await page.keyboard.press('Escape');
  await expect(popover(page)).toHaveCount(0);

  await page.reload();
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  await page.waitForTimeout(2_500);
  await expect(page.getByTestId('tour-invite')).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('"Not now" dismisses the invitation for good; the Tour button restarts the tour, Done ends it', async ({ page }) => {
  test.setTimeout(150_000);
  await asPerson(page);
  await open(page);
  await page.getByTestId('tour-invite').getByRole('button', { name: 'Not now' }).click();
  await expect(page.getByTestId('tour-invite')).toHaveCount(0);
  expect(await page.evaluate(() => localStorage.getItem('ppo-playground-tour'))).toBe('done');

  const button = page.getByRole('button', { name: 'Tour', exact: true });
  await button.focus();
  await page.keyboard.press('Enter');
  // Forward with the popover's own Next button this time, from the keyboard focus it starts on.
  for (const [i, step] of TOUR_STEPS.entries()) {
    await atStep(page, step.id);
    // No experiment chosen: the Start step says to pick one.
    if (step.id === 'start') await expect(popover(page)).toContainText('pick a card first');
    if (i < TOUR_STEPS.length - 1) await page.keyboard.press('Enter');
  }
  await popover(page).getByRole('button', { name: 'Done' }).click();
  await expect(popover(page)).toHaveCount(0);
});

test('an automated browser gets no invitation; a storage that throws still lets the tour run', async ({ page }) => {
  // Only the tour's key throws: the page's Run-both record (src/store/sequencePersist.ts) does not
  // yet survive a getItem that throws, which is that module's to fix.
  await page.addInitScript(() => {
    const { getItem, setItem } = Storage.prototype;
    Storage.prototype.getItem = function (key: string) {
      if (key.startsWith('ppo-playground-tour')) throw new DOMException('denied', 'SecurityError');
      return getItem.call(this, key);
    };
    Storage.prototype.setItem = function (key: string, value: string) {
      if (key.startsWith('ppo-playground-tour')) throw new DOMException('denied', 'SecurityError');
      setItem.call(this, key, value);
    };
  });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await open(page);
  await page.waitForTimeout(2_500);
  await expect(page.getByTestId('tour-invite')).toHaveCount(0);
  await page.getByRole('button', { name: 'Tour', exact: true }).click();
  await expect(popover(page)).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(popover(page)).toHaveCount(0);
  expect(errors).toEqual([]);
});

for (const viewport of [
  { width: 390, height: 844 },
  { width: 1366, height: 900 },
]) {
  test(`every step of the tour fits the screen at ${viewport.width}×${viewport.height}`, async ({ page }) => {
    test.setTimeout(150_000);
    await page.setViewportSize(viewport);
    await open(page);
    await page.getByRole('button', { name: 'Tour', exact: true }).click();
    for (const [i, step] of TOUR_STEPS.entries()) {
      await atStep(page, step.id);
      const box = await popover(page).boundingBox();
      expect(box, step.id).not.toBeNull();
      expect(box!.x, step.id).toBeGreaterThanOrEqual(0);
      expect(box!.y, step.id).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width, step.id).toBeLessThanOrEqual(viewport.width + 1);
      expect(box!.y + box!.height, step.id).toBeLessThanOrEqual(viewport.height + 1);
      if (process.env.TOUR_SHOTS) await page.screenshot({ path: `${process.env.TOUR_SHOTS}/tour-${viewport.width}-${i + 1}-${step.id}.png` });
      if (i < TOUR_STEPS.length - 1) await page.keyboard.press('ArrowRight');
    }
  });
}
