// The Inspect tab on a fixture trace put in through the test hook: the token table shows the
// trace's numbers, the walk-through follows the keyboard, "what if" moves the clip fraction, and
// axe finds no serious or critical violation.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { recomputeTrace, tokenTable } from '../src/rl/inspect/index.ts';
import { formatNumber } from '../src/ui/inspect/format.ts';
import { traceToJson } from '../src/store/traceJson.ts';
import { FIXTURE, fixtureTrace } from './inspectorFixture.ts';

// The pages skip the trainer warm-up unless a test below asks for it (fixtures.ts).
test.use({ warmUp: false });

// The page loads WebGPU on SwiftShader before the tab opens; axe adds its own pass.
test.describe.configure({ timeout: 150_000 });

const captured = fixtureTrace();
const { trace } = captured;

async function openInspect(page: Page) {
  await page.addInitScript(() => localStorage.setItem('ppo-test-hooks', '1'));
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto('/');
  await page.getByRole('tab', { name: 'Inspect' }).click();
  await expect(page.getByText('No iteration captured yet.')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Step once and inspect' })).toBeVisible();
  await page.evaluate((json) => (window.ppoPlayground as unknown as { pushTrace(j: unknown): void }).pushTrace(json), traceToJson(captured));
  await expect(page.locator('table.inspect-table')).toBeVisible();
}

const cell = (page: Page, t: number, col: string) => page.locator('table.inspect-table tbody tr').nth(t).locator(`[data-col="${col}"]`).first();

test('the token table shows the trace’s own numbers, a masked position marked', async ({ page }) => {
  await openInspect(page);
  const list = page.getByRole('listbox');
  await list.focus();
  await page.keyboard.press('ArrowDown');
  await expect(list.getByRole('option', { selected: true })).toContainText(captured.prompts[FIXTURE.holeRow]);
  await expect(page.locator('table.inspect-table caption')).toContainText(`response ${FIXTURE.holeRow + 1}`);
  const table = tokenTable(trace, FIXTURE.holeRow, recomputeTrace(trace));
  for (const t of [0, 2, 5]) {
    const r = table.rows[t];
    for (const [col, v] of [
      ['old', r.oldLogprob],
      ['ref', r.refLogprob],
      ['kl', r.kl],
      ['klPen', r.klReward],
      ['reward', r.reward],
      ['delta', r.delta],
      ['advRaw', r.advantageRaw],
      ['adv', r.advantage],
      ['ret', r.return],
      ['ratio', r.updates[0].ratio],
      ['vUnclipped', r.updates[0].value!.unclipped],
      ['vClipTerm', r.updates[0].value!.clippedTerm],
      ['vLoss', r.updates[0].value!.loss],
    ] as const) {
      const span = cell(page, t, col).locator('span').first();
      await expect(span, `${col} at t = ${t}`).toHaveText(formatNumber(v));
      await expect(span).toHaveAttribute('title', String(v));
    }
  }
  await expect(page.locator('table.inspect-table tbody tr').nth(3)).toHaveClass(/masked/);
  await expect(cell(page, 3, 'mask')).toContainText('masked');
  await expect(page.getByRole('columnheader', { name: 'A_t whitened' })).toBeVisible();
  await expect(page.getByRole('columnheader', { name: 'KL_t (k1)' })).toBeVisible();
  // Beside r_t its KL part; per step both value-loss terms before their max; no KL-loss column
  // while the KL is not in the loss.
  await expect(page.getByRole('columnheader', { name: '−β·KL_t' })).toBeVisible();
  expect(await page.locator('table.inspect-table thead th[data-col]').evaluateAll((hs) => hs.map((h) => h.getAttribute('data-col')).slice(5, 8))).toEqual([
    'kl',
    'klPen',
    'reward',
  ]);
  await expect(page.getByRole('columnheader', { name: '½(V−R)²' }).first()).toBeVisible();
  await expect(page.getByRole('columnheader', { name: '½(V_clip−R)²' }).first()).toBeVisible();
  await expect(page.locator('table.inspect-table [data-col="klLossT"]')).toHaveCount(0);
});

test('the walk-through follows ← / →, scans GAE back to front through the masked position, and Esc leaves', async ({ page }) => {
  // The typeset formulas load KaTeX's fonts: each must come from 'self', as the CSP demands.
  const refused: string[] = [];
  page.on('console', (m) => {
    if (m.text().includes('Content Security Policy')) refused.push(m.text().slice(0, 160));
  });
  await openInspect(page);
  await page.getByRole('listbox').focus();
  await page.keyboard.press('ArrowDown');
  const start = page.getByRole('button', { name: 'Walk through this iteration' });
  await start.click();
  const walk = page.getByRole('region', { name: 'Walk-through' });
  await expect(walk).toBeFocused();
  await expect(walk.getByRole('heading')).toContainText('Step 1 of 8');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await expect(walk.getByRole('heading')).toContainText('Reward shaping');
  await expect(page.locator('table.inspect-table thead th[data-col="reward"]')).toHaveClass(/hl/);
  await expect(walk).toContainText('apply_kl_penalty');
  await expect(walk).toContainText('compute_approx_kl');
  await page.keyboard.press('ArrowRight');
  await expect(walk.getByRole('heading')).toContainText('Step 4 of 8');
  const scan = page.getByRole('region', { name: /Reverse scan/ });
  await expect(scan).toBeVisible();
  await expect(scan.locator('[aria-current="step"]')).toContainText(`t = ${FIXTURE.A - 1}`);
  await scan.getByRole('button', { name: 'Next position' }).click();
  await scan.getByRole('button', { name: 'Next position' }).click();
  await expect(scan.locator('[aria-current="step"]')).toContainText('t = 3');
  await expect(scan).toContainText('masked: the carried advantage passes through');
  await walk.focus();
  await page.keyboard.press('ArrowRight');
  await expect(walk.getByRole('heading')).toContainText('Whitening');
  await expect(walk).toContainText('masked_whiten');
  await page.keyboard.press('ArrowLeft');
  await expect(walk.getByRole('heading')).toContainText('Advantages');
  await page.evaluate(() => document.fonts.ready.then(() => undefined));
  expect(await page.evaluate(() => [...document.fonts].filter((f) => f.family.includes('KaTeX') && f.status === 'loaded').length)).toBeGreaterThan(0);
  await page.keyboard.press('Escape');
  await expect(walk).toHaveCount(0);
  await expect(start).toBeFocused();
  expect(refused).toEqual([]);
});

test('"what if" with a smaller ε changes the clip fraction, rejects a bad value, and resets', async ({ page }) => {
  await openInspect(page);
  const whatIf = page.getByRole('region', { name: 'What if, on this batch' });
  const clipRow = whatIf.locator('tr[data-key="clipFraction"]');
  const actual = recomputeTrace(trace).summary.clipFraction;
  const changed = recomputeTrace(trace, { ...trace.knobs, clipLow: 0.05, clipHigh: 0.05 }).summary.clipFraction;
  expect(changed).toBeGreaterThan(actual);
  await expect(clipRow.locator('td').nth(0)).toHaveText(formatNumber(actual));
  await whatIf.getByLabel('Clip ε', { exact: true }).fill('0.05');
  await whatIf.getByLabel('Clip ε (high)', { exact: true }).fill('0.05');
  await expect(clipRow.locator('td').nth(1)).toHaveText(formatNumber(changed));
  await expect(clipRow.locator('td').nth(0)).toHaveText(formatNumber(actual));
  await expect(page.getByText(/What if — not what was trained\. Italic values/)).toBeVisible();
  await whatIf.getByLabel('Clip ε', { exact: true }).fill('2');
  await expect(whatIf.getByRole('alert')).toContainText('Clip ε: must be a number from 0 (exclusive) to 1 (exclusive)');
  await expect(clipRow.locator('td').nth(1)).toHaveText(formatNumber(changed));
  await whatIf.getByRole('button', { name: 'Reset to the trained knobs' }).click();
  await expect(clipRow.locator('td').nth(1)).toHaveText(formatNumber(actual));
  await expect(whatIf.getByLabel('Clip ε', { exact: true })).toHaveValue('0.2');
});

test('"what if" with the KL in the loss adds each step’s per-token KL-loss term', async ({ page }) => {
  await openInspect(page);
  expect(trace.knobs.useKlLoss).toBe(false);
  await page.getByRole('region', { name: 'What if, on this batch' }).getByLabel('KL in the loss').check();
  const w = tokenTable(trace, 0, recomputeTrace(trace, { ...trace.knobs, useKlLoss: true }));
  await expect(page.getByRole('columnheader', { name: `KL_t loss (${trace.knobs.klLossEstimator})` }).first()).toBeVisible();
  for (const t of [0, 1]) {
    const v = w.rows[t].updates[0].klLossTerm!;
    await expect(cell(page, t, 'klLossT').locator('.whatif-value')).toHaveText(`→ ${formatNumber(v)}`);
  }
});

test('axe finds no serious or critical violation in the inspector', async ({ page }) => {
  await openInspect(page);
  await page.getByRole('button', { name: 'Walk through this iteration' }).click();
  await page.getByRole('region', { name: 'What if, on this batch' }).getByLabel('KL coefficient β').fill('0.5');
  const result = await new AxeBuilder({ page }).include('.inspector').withTags(['wcag2a', 'wcag2aa']).analyze();
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
});
