// Every card has its recorded run (#34 item 2): "Show the result" puts the card's arms on the charts
// as they were recorded (marked recorded, a comparison of their own, the inspector's iterations
// there), on any device and without training; "Train it yourself" is the live run. Without WebGPU
// the guide offers the cards' recorded runs first. The time each card takes to open is printed
// (a measurement, not a check: docs/page.md has the numbers).
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';

test.use({ warmUp: false });
test.describe.configure({ timeout: 180_000 });

/** Cards by test id, in the page's order, with their arms' names as the run list shows them. */
const CARDS: { slug: string; name: string; arms: string[] }[] = [
  { slug: 'learn-arithmetic', name: 'Learn arithmetic', arms: ['Learn arithmetic'] },
  { slug: 'reward-hacking-without-kl', name: 'Reward hacking without KL', arms: ['β = 0', 'β = 0.6'] },
  { slug: 'write-your-own-reward', name: 'Write your own reward', arms: ['Write your own reward'] },
  { slug: 'tight-vs-loose-clipping', name: 'Tight vs loose clipping', arms: ['ε = 0.05', 'ε = 0.5'] },
  { slug: 'ppo-vs-grpo', name: 'PPO vs GRPO', arms: ['PPO (GAE)', 'GRPO'] },
  { slug: 'adaptive-kl', name: 'Adaptive KL', arms: ['Adaptive KL'] },
  { slug: 'dapo', name: 'DAPO', arms: ['DAPO'] },
  { slug: 'entropy-collapse', name: 'Entropy collapse', arms: ['vanilla', 'ε_high = 0.28', 'clip-cov', 'kl-cov'] },
  { slug: 'stop-properly', name: 'Stop properly', arms: ['Stop properly'] },
];

async function open(page: Page, withoutWebGpu = false) {
  if (withoutWebGpu) await page.addInitScript(() => Object.defineProperty(navigator, 'gpu', { value: undefined }));
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto('/');
}

/** The runs of the comparison on the charts (the run list's chips; earlier ones are folded away). */
function shownRuns(page: Page) {
  return page.getByTestId('run-list').getByRole('listitem');
}

test('each card’s Show the result puts its recorded arms on the charts, one comparison per card, with the inspector', async ({ page }) => {
  await open(page);
  const times: string[] = [];
  for (const card of CARDS) {
    const li = page.getByTestId(`preset-card-${card.slug}`);
    await li.getByRole('button', { name: card.name, exact: true }).click();
    const detail = li.getByTestId('preset-detail');
    const t0 = Date.now();
    await detail.getByTestId('preset-show-result').click();
    await expect(shownRuns(page)).toHaveCount(card.arms.length);
    times.push(`${card.name} ${Date.now() - t0} ms`);
    for (const arm of card.arms)
      await expect(
        shownRuns(page)
          .filter({ has: page.getByRole('checkbox', { name: `Show ${arm}`, exact: true, checked: true }) })
          .getByTestId('recorded-badge'),
      ).toHaveText('recorded');
    await expect(page.getByTestId('notice')).toContainText(`“${card.name}” ${card.arms.length > 1 ? 'are' : 'is'} on the charts`);
    await expect(page.getByTestId('notice')).toContainText('seed 1');
    // one line per arm on the reward chart: the runs of the cards before are off the charts
    await expect(page.getByTestId('chart-reward_mean').locator('path.recharts-line-curve')).toHaveCount(card.arms.length);
  }
  console.log(`[timing] Show the result, click to every arm on the charts: ${times.join(', ')}`);
  // Every card's runs are kept, the earlier cards' folded away, all recorded: nothing trained.
  const allRuns = CARDS.reduce((n, c) => n + c.arms.length, 0);
  const everyRun = page.locator('[data-testid="run-list"] > li, [data-testid="earlier-run-list"] > li');
  await expect(everyRun).toHaveCount(allRuns);
  await expect(everyRun.getByTestId('recorded-badge')).toHaveCount(allRuns);

  // The shown run's inspected iterations came with it: the last card's last arm, its last iteration.
  await page.getByRole('tab', { name: 'Inspect' }).click();
  await expect(page.locator('table.inspect-table')).toBeVisible();

  // Shown again, a card's runs are not added twice.
  const dapo = page.getByTestId('preset-card-dapo');
  await dapo.getByRole('button', { name: 'DAPO', exact: true }).click();
  await dapo.getByTestId('preset-show-result').click();
  await expect(shownRuns(page)).toHaveCount(1);
  await expect(page.getByRole('checkbox', { name: 'Show DAPO', exact: true })).toBeChecked();
  await expect(everyRun).toHaveCount(allRuns);
  // A card without arms trains live from "Train it yourself".
  await expect(dapo.getByTestId('preset-start')).toHaveText('Train it yourself');
});

test('without WebGPU the guide offers every card’s recorded run first; one opens the playground with it', async ({ page }) => {
  await open(page, true);
  const offered = page.getByTestId('no-webgpu-preset-results');
  await expect(offered.getByRole('button')).toHaveText(CARDS.map((c) => c.name));
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa']).include('[data-testid="no-webgpu"]').analyze();
  expect(results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
  await offered.getByRole('button', { name: 'PPO vs GRPO' }).click();
  await expect(page.getByTestId('no-webgpu')).toBeHidden();
  await expect(shownRuns(page)).toHaveCount(2);
  await expect(page.getByTestId('chart-heldout').locator('path.recharts-line-curve')).not.toHaveCount(0);
  await page.getByRole('tab', { name: 'Clipping' }).click();
  await expect(page.locator('section.teaching')).toContainText('ε');
});

test('a slide embeds a card’s shipped run by its path', async ({ page }) => {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.setViewportSize({ width: 800, height: 450 });
  await page.goto('/?run=runs/presets/clipping-1.json&embed=clipping');
  await expect(page.getByTestId('embed')).toHaveAttribute('data-embed', 'clipping');
  await expect(page.getByTestId('embed-run')).toHaveText('ε = 0.05recorded');
  await expect(page.getByTestId('embed-body')).toBeVisible();
});
