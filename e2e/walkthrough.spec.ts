// The inspector's walk-through and the batch by the frameworks' names, on fixture traces: the
// walk-through comes into view when opened, writes a_t as the token's text, fits every formula in
// its box at 1366, 1280 (presenter mode) and 390 wide, names the run's own function first, prints
// μ and σ; the what-if's estimator and loss aggregation reach the headers and the numbers; the
// iteration picker follows a new run; a group estimator's s̃ has its own column; the Experience
// view shows each field's shape and the chosen response's row of the trace's own tensors.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { dimSizes, KL_TEX, openrlhfExperience, recomputeTrace, texNumber, tokenTable, verlBatch } from '../src/rl/inspect/index.ts';
import { formatNumber } from '../src/ui/inspect/format.ts';
import { traceToJson } from '../src/store/traceJson.ts';
import type { CapturedTrace } from '../src/store/inspection.ts';
import { FIXTURE, fixtureTrace } from './inspectorFixture.ts';

// The pages skip the trainer warm-up unless a test below asks for it (fixtures.ts).
test.use({ warmUp: false });

test.describe.configure({ timeout: 180_000 });

const captured = fixtureTrace();
const { trace } = captured;

async function push(page: Page, c: CapturedTrace) {
  await page.evaluate((json) => (window.ppoPlayground as unknown as { pushTrace(j: unknown): void }).pushTrace(json), traceToJson(c));
}

async function openInspect(page: Page, query = '', c: CapturedTrace = captured) {
  await page.addInitScript(() => localStorage.setItem('ppo-test-hooks', '1'));
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto(`/${query}`);
  await page.getByRole('tab').last().click();
  await expect(page.locator('.inspect-empty')).toBeVisible();
  await push(page, c);
  await expect(page.locator('table.inspect-table')).toBeVisible();
}

const walk = (page: Page) => page.locator('.walk-region');

test('opened, the walk-through comes to the top of the window; a_t is the token’s text; μ and σ; the run’s function first', async ({ page }) => {
  await openInspect(page);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.locator('.inspect-actions .btn').first().click();
  await expect(walk(page)).toBeFocused();
  await expect.poll(async () => (await walk(page).boundingBox())?.y ?? -1).toBeLessThan(100);
  expect((await walk(page).boundingBox())!.y).toBeGreaterThanOrEqual(0);
  // Step 1 at the default token, the response's last (EOS): its text, not only its id.
  const t = FIXTURE.A - 1 - [...trace.actionMask.subarray(0, FIXTURE.A)].reverse().findIndex((m) => m !== 0);
  const texts = () =>
    walk(page)
      .locator('.formula-fit')
      .evaluateAll((fs) => fs.map((f) => f.getAttribute('data-tex') ?? ''));
  expect((await texts()).join(' ')).toContain(`a_{${t}} = \\texttt{“<eos>”}`);
  await expect(walk(page)).toContainText('<eos>');
  // Step 5: whitening says μ and σ (σ = √ of the Bessel-corrected variance), not only 1/σ.
  await walk(page).locator('.walk-step').nth(4).click();
  const w = recomputeTrace(trace).whitening!;
  const whitened = (await texts()).join(' ');
  expect(whitened).toContain(`\\mu = ${texNumber(w.mean)}`);
  expect(whitened).toContain(`\\sigma = ${texNumber(Math.sqrt(w.variance))}`);
  // Step 6: the run's own policy-loss function first and marked, the other modes after.
  await walk(page).locator('.walk-step').nth(5).click();
  const verl = walk(page).locator('.walk-fns[data-framework="verl"]');
  await expect(verl.locator('code').first()).toHaveText('compute_policy_loss_vanilla');
  await expect(verl.locator('.walk-fn-used')).toHaveCount(1);
  await expect(verl.locator('.walk-fn-used')).toContainText('(this run)');
  await expect(verl).toContainText('other modes');
  await expect(verl.locator('code')).toHaveCount(8);
});

for (const size of [
  { name: '1366×900', width: 1366, height: 900, query: '' },
  { name: '1280×720 presenter', width: 1280, height: 720, query: '?present=1' },
  { name: '390×844', width: 390, height: 844, query: '' },
]) {
  test(`every formula of every step fits its box at ${size.name}`, async ({ page }) => {
    await page.setViewportSize({ width: size.width, height: size.height });
    await openInspect(page, size.query);
    await page.locator('.inspect-actions .btn').first().click();
    // KaTeX has typeset (its fonts loaded) before the boxes are measured.
    await expect(walk(page).locator('.katex').first()).toBeVisible();
    await page.evaluate(() => document.fonts.ready.then(() => undefined));
    for (let step = 0; step < 8; step++) {
      await walk(page).locator('.walk-step').nth(step).click();
      await expect(walk(page).locator('.walk-step').nth(step)).toHaveAttribute('aria-current', 'step');
      await expect(walk(page).locator('.formula-fit .katex').first()).toBeVisible();
      const over = await walk(page)
        .locator('.formula-fit')
        .evaluateAll((fs) =>
          fs.map((f) => ({ tex: (f.getAttribute('data-tex') ?? '').slice(0, 50), over: f.scrollWidth - f.clientWidth, right: f.getBoundingClientRect().right })),
        );
      for (const f of over) expect(f.over, `step ${step + 1}: ${f.tex}`).toBeLessThanOrEqual(1);
      // Nor does the formula's box reach past the walk-through's.
      const box = (await walk(page).boundingBox())!;
      for (const f of over) expect(f.right, `step ${step + 1}: ${f.tex}`).toBeLessThanOrEqual(box.x + box.width + 1);
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    }
  });
}

test('the what-if’s KL estimator heads the KL column and the walk-through’s formula; loss aggregation is a what-if knob', async ({ page }) => {
  await openInspect(page);
  const whatIf = page.getByRole('region', { name: 'What if, on this batch' });
  await whatIf.getByLabel('KL estimator').selectOption('k3');
  await expect(page.getByRole('columnheader', { name: 'KL_t (k1 → k3)' })).toBeVisible();
  await page.locator('.inspect-actions .btn').first().click();
  await walk(page).locator('.walk-step').nth(2).click();
  const whatIfFormula = walk(page).locator('.whatif-formula').first();
  await expect(whatIfFormula).toContainText('Formula under the what-if knobs');
  expect(await whatIfFormula.locator('.formula-fit').getAttribute('data-tex')).toContain(KL_TEX.k3);
  await whatIf.getByRole('button', { name: 'Reset to the trained knobs' }).click();
  // Loss aggregation: seq-mean-token-mean moves the policy loss by the recomputation's amount.
  const agg = recomputeTrace(trace, { ...trace.knobs, lossAgg: 'seq-mean-token-mean' }).summary.policyLoss;
  expect(agg).not.toBeCloseTo(recomputeTrace(trace).summary.policyLoss, 6);
  await whatIf.getByLabel('Loss aggregation').selectOption('seq-mean-token-mean');
  await expect(whatIf.locator('tr[data-key="policyLoss"] td').nth(1)).toHaveText(formatNumber(agg));
});

test('the iteration picker follows a new run’s first capture, and holds an older iteration of the same run', async ({ page }) => {
  await openInspect(page);
  const picker = page.locator('#inspect-iteration');
  await expect(picker).toHaveValue(`fixture-run:${trace.iter}`);
  await push(page, { ...captured, trace: { ...trace, iter: trace.iter + 1 } });
  // The chosen iteration holds while the same run captures a newer one.
  await expect(picker).toHaveValue(`fixture-run:${trace.iter}`);
  await push(page, { ...fixtureTrace(12), runId: 'run-2' });
  await expect(picker).toHaveValue(`run-2:${trace.iter}`);
});

test('a group estimator’s table has s̃ where it enters the scan, and r_t the reward the scan adds', async ({ page }) => {
  const group = fixtureTrace(11, 0.3, { advantageEstimator: 'rloo', klCoef: 0.1 });
  await openInspect(page, '', group);
  const rec = recomputeTrace(group.trace);
  const table = tokenTable(group.trace, 0, rec);
  await expect(page.getByRole('columnheader', { name: 's̃' })).toBeVisible();
  const rows = page.locator('table.inspect-table tbody tr[data-t]');
  for (const r of table.rows) {
    const tr = rows.nth(r.t);
    await expect(tr.locator('[data-col="normScore"] span').first()).toHaveText(formatNumber(r.normScore));
    await expect(tr.locator('[data-col="reward"] span').first()).toHaveText(formatNumber(r.scanReward));
    await expect(tr.locator('[data-col="reward"] span').first()).toHaveAttribute('title', String(r.scanReward));
  }
  // No critic: no V_t or δ_t column.
  await expect(page.locator('table.inspect-table thead [data-col="value"]')).toHaveCount(0);
});

test('the batch by the frameworks’ names: each field’s shape and this response’s row, OpenRLHF and verl', async ({ page }) => {
  await openInspect(page);
  const view = page.getByTestId('experience-view');
  const sizes = dimSizes(trace);
  await page.getByRole('listbox').getByRole('option').nth(2).click();
  const row = 2;
  const fieldRow = (name: string) => view.locator(`tr[data-field='${name}']`);
  await expect(fieldRow('action_log_probs').locator('.shape')).toHaveText(`(B, A) = (${sizes.B}, ${sizes.A})`);
  await expect(fieldRow('sequences').locator('.shape')).toHaveText(`(B, S) = (${sizes.B}, ${sizes.S})`);
  const adv = openrlhfExperience(trace).find((f) => f.name === 'advantages')!.data!;
  await expect(fieldRow('advantages').locator('.tensor-row')).toHaveText(
    `[${Array.from(adv)
      .slice(row * sizes.A, (row + 1) * sizes.A)
      .map((x) => formatNumber(x))
      .join(', ')}]`,
  );
  await view.getByRole('radio', { name: 'verl DataProto.batch' }).check();
  const rewards = verlBatch(trace).find((f) => f.name === 'token_level_rewards')!.data!;
  await expect(fieldRow('token_level_rewards').locator('.tensor-row')).toHaveText(
    `[${Array.from(rewards)
      .slice(row * sizes.A, (row + 1) * sizes.A)
      .map((x) => formatNumber(x))
      .join(', ')}]`,
  );
  // The token table's heads carry the same names.
  await expect(page.locator('table.inspect-table thead th[data-col="old"] .fw-name')).toHaveText(['action_log_probs', 'old_log_probs']);
  await expect(page.locator('table.inspect-table thead th[data-col="ref"] .fw-name')).toHaveText(['base_action_log_probs', 'ref_log_prob']);
});

test('axe: the inspector’s new parts (clip navigation, Experience view, group columns, fitted formulas) have no serious or critical violation', async ({ page }) => {
  await openInspect(page, '', fixtureTrace(11, 0.3, { advantageEstimator: 'rloo', klCoef: 0.1 }));
  await page.getByTestId('next-clipped').click();
  await page.getByLabel('Only clipped tokens').check();
  await page.locator('.inspect-actions .btn').first().click();
  await walk(page).locator('.walk-step').nth(5).click();
  await page.getByRole('region', { name: 'What if, on this batch' }).getByLabel('KL estimator').selectOption('k3');
  const result = await new AxeBuilder({ page }).include('.inspector').withTags(['wcag2a', 'wcag2aa']).analyze();
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
});
