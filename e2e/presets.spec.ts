// Preset cards and the runs they start, on the real trainer (SwiftShader WebGPU in Chromium):
// every card shows its budget, its estimator and critic, and its measured promise; a card applies
// its whole recipe whatever was set before; "Run both" trains each arm of a paired preset as its
// own run, named by the arm's label, overlaid as a new comparison; the held-out chart gets points
// (the SFT model at 0 and the end of the budget); iterations per second and the ETA show while
// training; a run trained before "Run both" is kept in the list, off the charts; a card's Start
// begins another comparison; every chart names its lines; runs and their evaluations survive a
// reload. `?budget=N` keeps every budget tiny.
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { DEFAULT_CONFIG, type PpoConfig } from '../src/rl/config.ts';
import { PRESETS, presetConfig, type Preset } from '../src/rl/presets.ts';
import { configToQuery } from '../src/store/urlConfig.ts';

/** A tiny batch so SwiftShader trains a few iterations in seconds (presets may override parts). */
const TINY = { promptsPerBatch: 2, samplesPerPrompt: 2, maxResponseLength: 4, ppoEpochs: 1, miniBatches: 1 };
const TINY_QUERY = Object.entries(TINY)
  .map(([k, v]) => `${k}=${v}`)
  .join('&');

const slug = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/** The paired preset that is cheapest to train on top of the tiny settings. */
function cheapestPaired(): Preset {
  const cost = (p: Preset) => {
    const c = { ...DEFAULT_CONFIG, ...TINY, ...p.values, ...(p.arms ?? [])[0]?.values };
    return c.promptsPerBatch * c.samplesPerPrompt * c.maxResponseLength * c.ppoEpochs * (c.rewardSource === 'model' ? 3 : 1);
  };
  return PRESETS.filter((p) => (p.arms?.length ?? 0) >= 2).sort((a, b) => cost(a) - cost(b))[0];
}

async function open(page: Page, query: string) {
  await page.goto(`/?${query}`);
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
}

/** Names and iteration counts of the runs of the current comparison (or, `earlier`, of the earlier ones). */
async function runList(page: Page, earlier = false): Promise<{ name: string; its: number }[]> {
  const chips = page.getByTestId(earlier ? 'earlier-run-list' : 'run-list').locator('li');
  const out: { name: string; its: number }[] = [];
  for (let i = 0; i < (await chips.count()); i++) {
    const chip = chips.nth(i);
    const name = await chip.locator('input[type="text"]').inputValue();
    const its = Number(/(\d+) it/.exec((await chip.textContent()) ?? '')?.[1] ?? NaN);
    out.push({ name, its });
  }
  return out;
}

/** Points on the held-out chart's lines (dots of the sampled lines). */
async function heldOutDots(page: Page): Promise<number> {
  return page.getByTestId('chart-heldout').locator('.recharts-line-dots circle, .recharts-line-dot').count();
}

// It never trains: its page skips the trainer warm-up (fixtures.ts).
test.describe(() => {
  test.use({ warmUp: false });
  test('every preset card shows its iteration budget and what its curve will do', async ({ page }) => {
    await open(page, '');
    for (const p of PRESETS) {
      const card = page.getByTestId(`preset-card-${slug(p.name)}`);
      await expect(card.getByRole('button', { name: p.name, exact: true })).toBeVisible();
      await expect(card.getByTestId('preset-budget')).toContainText(`${p.iterations} iterations`);
      if (p.arms && p.arms.length > 1) await expect(card.getByTestId('preset-budget')).toContainText(`× ${p.arms.length} arms`);
      // The measured promise when there is one; otherwise the card says it is not measured.
      await expect(card.getByTestId('preset-promise')).toHaveText(p.promise ?? 'Not measured yet: run it and see.');
      // The estimator and critic its arms train, as the card says them.
      const recipe = card.getByTestId('preset-recipe');
      const estimators = new Set((p.arms ?? [{}]).map((_, i) => presetConfig(p, i).advantageEstimator));
      await expect(recipe).toContainText(estimators.has('gae') ? 'with a critic' : 'no critic');
      if (estimators.size === 1 && !estimators.has('gae')) await expect(recipe).not.toContainText('with a critic');
    }
    await expect(page.getByTestId('preset-card-tight-vs-loose-clipping').getByTestId('preset-recipe')).toHaveText('Estimator (every arm): RLOO, no\u00a0critic');
    await expect(page.getByTestId('preset-card-ppo-vs-grpo').getByTestId('preset-recipe')).toHaveText(
      'Estimators: PPO (GAE): GAE with a critic (value model) · GRPO: GRPO, no\u00a0critic',
    );
    // Choosing a paired preset opens its card: explanation, arms, Run both.
    const paired = cheapestPaired();
    await page.getByRole('button', { name: paired.name, exact: true }).click();
    const detail = page.getByTestId('preset-detail');
    await expect(detail.getByTestId('preset-explanation')).toHaveText(paired.explanation);
    for (const arm of paired.arms!) await expect(detail).toContainText(arm.label);
    await expect(detail.getByTestId('run-arms')).toHaveText('Run both');
    await expect(page.getByTestId(`preset-card-${slug(paired.name)}`)).toHaveClass(/selected/);
  });
});

test("a wrong ?budget= is named and ignored, and the budgets stay the presets' own", async ({ page }) => {
  await open(page, 'budget=abc');
  await expect(page.getByTestId('url-problems')).toContainText('budget = "abc": allowed: a whole number of iterations from 1 to 10000');
  await expect(page.getByTestId(`preset-card-${slug(PRESETS[0].name)}`).getByTestId('preset-budget')).toContainText(`${PRESETS[0].iterations} iterations`);
  await expect(page.getByTestId('eta')).toHaveText('ETA —');
});

test('Start shows iterations per second, and the ETA only when a preset budget applies', async ({ page }) => {
  test.setTimeout(150_000);
  const paired = cheapestPaired();
  await open(page, `${TINY_QUERY}&budget=40`);
  // No preset: no budget, so no ETA.
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await expect(page.getByTestId('speed')).toHaveText(/^\d+(\.\d+)? it\/s$/, { timeout: 60_000 });
  await expect(page.getByTestId('eta')).toHaveText('ETA —');
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await expect(page.getByTestId('speed')).toHaveText('— it/s');
  await page.getByRole('button', { name: 'Reset', exact: true }).click();
  // A preset: its budget (40 from the link) applies, and the ETA counts down to it.
  await page.getByRole('button', { name: paired.name, exact: true }).click();
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await expect(page.getByTestId('iterations')).toHaveText(/^iteration \d+ \/ 40$/, { timeout: 30_000 });
  await expect(page.getByTestId('speed')).toHaveText(/^\d+(\.\d+)? it\/s$/, { timeout: 60_000 });
  await expect(page.getByTestId('eta')).toHaveText(/^ETA (\d+ s|\d+ min \d\d s|\d+ h \d\d min)$/);
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await expect(page.locator('[data-testid="notice"].error')).toHaveCount(0);
});

/** The config the address bar holds (the page mirrors every change into it). */
function configInUrl(page: Page): Record<string, string> {
  const q = new URL(page.url()).searchParams;
  return Object.fromEntries(Object.keys(DEFAULT_CONFIG).flatMap((k) => (q.has(k) ? [[k, q.get(k)!]] : [])));
}

const queryOf = (c: PpoConfig) => Object.fromEntries(new URLSearchParams(configToQuery(c)));

test('a card applies its whole recipe: after another card, each gives exactly its own fresh config', async ({ page }) => {
  test.setTimeout(180_000);
  await open(page, '');
  const card = (p: Preset) => page.getByTestId(`preset-card-${slug(p.name)}`).getByRole('button', { name: p.name, exact: true });
  // Every preset after every other is tests/unit/store_presets.test.ts; here each card once after
  // the one before it (every preset as the first and as the second of a pair), and the pair
  // teachers met: "Reward hacking without KL" after "Tight vs loose clipping" trains with ε = 0.2.
  const named = (n: string) => PRESETS.find((p) => p.name === n)!;
  const pairs = [...PRESETS.map((b, i) => [PRESETS.at(i - 1)!, b] as const), [named('Tight vs loose clipping'), named('Reward hacking without KL')] as const];
  for (const [a, b] of pairs) {
    await card(a).click();
    await expect.poll(() => configInUrl(page), { message: a.name }).toEqual(queryOf(presetConfig(a)));
    await card(b).click();
    await expect.poll(() => configInUrl(page), { message: `${a.name} then ${b.name}` }).toEqual(queryOf(presetConfig(b)));
  }
  expect(configInUrl(page).clipLow).toBe('0.2');
});

test("Run both trains every arm's whole recipe, whatever the settings were", async ({ page }) => {
  test.setTimeout(240_000);
  await open(page, `${TINY_QUERY}&budget=50`);
  for (const [i, p] of PRESETS.filter((x) => (x.arms?.length ?? 0) >= 2).entries()) {
    // Another preset's loose clipping and a hand-edited knob first.
    await page.getByRole('button', { name: 'Tight vs loose clipping', exact: true }).click();
    await page.getByLabel('Entropy bonus', { exact: true }).fill(String(0.01 * (i + 1)));
    await page.getByRole('button', { name: p.name, exact: true }).click();
    await page.getByTestId('run-arms').click();
    await expect(page.getByTestId('sequence-status')).toContainText(`Arm 1 of ${p.arms!.length}`);
    const planned = await page.evaluate(() => JSON.parse(localStorage.getItem('ppo-playground-run-both') ?? 'null') as { arms: { label: string; config: PpoConfig }[] } | null);
    expect(planned?.arms.map((a) => a.label)).toEqual(p.arms!.map((a) => a.label));
    for (const [k, arm] of planned!.arms.entries()) expect(arm.config, `${p.name}: ${arm.label}`).toEqual(presetConfig(p, k));
    await page.getByRole('button', { name: 'Reset', exact: true }).click();
    await expect(page.getByTestId('sequence-status')).toHaveCount(0);
  }
});

test('Run both trains each arm as its own labelled run, overlays them, charts held-out points and survives a reload', async ({ page }) => {
  test.setTimeout(240_000);
  const paired = cheapestPaired();
  const labels = paired.arms!.map((a) => a.label);
  await open(page, `${TINY_QUERY}&budget=2`);
  // A run of one's own first: Run both must keep it.
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  await expect.poll(async () => (await runList(page))[0]?.its ?? 0, { timeout: 60_000 }).toBe(1);
  const own = (await runList(page))[0];
  await expect(page.getByTestId('chart-reward_mean').getByTestId('chart-legend')).toHaveText(own.name);
  await page.getByRole('button', { name: paired.name, exact: true }).click();
  await page.getByTestId('run-arms').click();
  await expect(page.getByTestId('sequence-status')).toContainText(`Arm 1 of ${labels.length}: ${labels[0]}`);
  await expect(page.getByTestId('run-state')).toHaveText('Training');
  // Pause in the middle of the first arm, then resume: nothing is lost and the sequence goes on.
  await expect.poll(async () => (await runList(page))[0]?.its ?? 0, { timeout: 90_000 }).toBeGreaterThanOrEqual(1);
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await expect(page.getByTestId('run-state')).toHaveText('Paused');
  await page.getByRole('button', { name: 'Start', exact: true }).click();

  const expected = labels.map((name) => ({ name, its: 2 }));
  await expect.poll(() => runList(page), { timeout: 180_000, message: 'both arms trained their budget' }).toEqual(expected);
  // The run before is kept, in the earlier runs, off the charts.
  expect(await runList(page, true)).toEqual([own]);
  await expect(page.getByTestId('sequence-status')).toHaveCount(0);
  await expect(page.getByTestId('notice')).toContainText(`"${paired.name}" done`);
  // Both arms overlaid on the training charts and on the held-out chart (0 = SFT, 2 = end of budget),
  // each chart naming its lines; the earlier run's line is not drawn.
  await expect(page.getByTestId('chart-reward_mean').locator('path.recharts-line-curve')).toHaveCount(labels.length);
  for (const metric of ['reward_mean', 'clipfrac', 'heldout'])
    await expect(page.getByTestId(`chart-${metric}`).getByTestId('chart-legend').getByRole('listitem')).toHaveText(labels);
  await expect.poll(() => heldOutDots(page)).toBeGreaterThanOrEqual(2 * labels.length);
  // Sampled, greedy and, on arithmetic (this preset's task), pass@4: three lines a run.
  expect(paired.values.task).toBe('arithmetic');
  await expect(page.getByTestId('chart-heldout').locator('path.recharts-line-curve')).toHaveCount(3 * labels.length);
  await expect(page.locator('[data-testid="notice"].error')).toHaveCount(0);
  await page.screenshot({ path: test.info().outputPath('run-both.png'), fullPage: true });

  // Persisted: a reload restores both runs with their evaluations.
  await page.waitForTimeout(1_500);
  await page.reload();
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  await expect.poll(() => runList(page)).toEqual(expected);
  expect(await runList(page, true)).toEqual([own]);
  await expect.poll(() => heldOutDots(page)).toBeGreaterThanOrEqual(2 * labels.length);
  // An earlier run ticked back joins the charts, in a colour of its own.
  await page.getByTestId('earlier-runs').locator('summary').click();
  await page.getByRole('checkbox', { name: `Show ${own.name}` }).check();
  await expect(page.getByTestId('chart-reward_mean').locator('path.recharts-line-curve')).toHaveCount(labels.length + 1);
  const strokes = await page
    .getByTestId('chart-reward_mean')
    .locator('path.recharts-line-curve')
    .evaluateAll((ps) => ps.map((p) => p.getAttribute('stroke')));
  expect(new Set(strokes).size).toBe(labels.length + 1);
});

test("a card's Start begins a comparison of its own; New comparison and Clear", async ({ page }) => {
  test.setTimeout(300_000);
  const paired = cheapestPaired();
  const labels = paired.arms!.map((a) => a.label);
  await open(page, `${TINY_QUERY}&budget=1`);
  await page.getByRole('button', { name: paired.name, exact: true }).click();
  await page.getByTestId('run-arms').click();
  await expect.poll(() => runList(page), { timeout: 180_000 }).toEqual(labels.map((name) => ({ name, its: 1 })));
  await expect(page.getByTestId('sequence-status')).toHaveCount(0, { timeout: 60_000 });
  // A card's Start: the preset trains to its budget as a comparison of its own.
  const single = PRESETS.find((p) => p.name === 'Learn arithmetic')!;
  await page.getByRole('button', { name: single.name, exact: true }).click();
  await page.getByTestId('preset-start').click();
  await expect.poll(async () => (await runList(page)).map((r) => r.its), { timeout: 120_000 }).toEqual([1]);
  expect((await runList(page, true)).map((r) => r.name)).toEqual(labels);
  await expect(page.getByTestId('chart-reward_mean').locator('path.recharts-line-curve, .recharts-line-dots circle')).not.toHaveCount(0);
  await expect(page.getByTestId('chart-reward_mean').getByTestId('chart-legend').getByRole('listitem')).toHaveCount(1);
  await expect(page.getByTestId('chart-clipfrac').getByTestId('chart-legend').getByRole('listitem')).toHaveCount(1);
  // Learn arithmetic trains no critic: its value-loss chart says so.
  await expect(page.getByTestId('chart-note-value_loss')).toContainText('No critic: rloo');
  // New comparison: every run off the charts, all kept.
  await page.getByTestId('new-comparison').click();
  await expect(page.getByTestId('run-list-empty-comparison')).toBeVisible();
  await expect(page.getByTestId('chart-reward_mean')).toContainText('No data yet');
  expect(await runList(page, true)).toHaveLength(labels.length + 1);
  // Clear asks first, then deletes every run.
  await page.getByTestId('clear-runs').click();
  await expect(page.locator('.run-clear-confirm')).toContainText(`Delete ${labels.length + 1} runs for good?`);
  await page.getByTestId('clear-runs-yes').click();
  await expect(page.getByTestId('run-list-empty')).toBeVisible();
  await expect(page.locator('[data-testid="notice"].error')).toHaveCount(0);
});

/** The saved trainer state's run and iteration (IndexedDB `states`), or null. */
function savedState(page: Page): Promise<{ runId: string; iter: number } | null> {
  return page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const r = indexedDB.open('ppo-playground');
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    if (!Array.from(db.objectStoreNames).includes('states')) {
      db.close();
      return null;
    }
    const st = await new Promise<{ runId: string; iter: number } | undefined>((resolve, reject) => {
      const req = db.transaction('states', 'readonly').objectStore('states').get('latest');
      req.onsuccess = () => resolve(req.result as { runId: string; iter: number } | undefined);
      req.onerror = () => reject(req.error);
    });
    db.close();
    return st ? { runId: st.runId, iter: st.iter } : null;
  });
}

test('Run both survives a reload: the arm in progress resumes from its saved state and the sequence goes on', async ({ page }) => {
  test.setTimeout(300_000);
  const paired = cheapestPaired();
  const labels = paired.arms!.map((a) => a.label);
  // A budget of 6: Pause must land while the second arm is short of it (at 3 a tiny arm could finish
  // its last iteration before the click, and a finished last arm leaves nothing to resume).
  await open(page, `${TINY_QUERY}&budget=6`);
  await page.getByRole('button', { name: paired.name, exact: true }).click();
  await page.getByTestId('run-arms').click();
  // Into the second arm, then Pause (which saves its state) and reload.
  await expect(page.getByTestId('sequence-status')).toContainText(`Arm 2 of ${labels.length}: ${labels[1]}`, { timeout: 150_000 });
  await expect.poll(async () => (await runList(page))[1]?.its ?? 0, { timeout: 90_000 }).toBeGreaterThanOrEqual(1);
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  // The worker finishes the iteration in flight before it pauses (its `paused` says so): wait for
  // that, so k is final and the Pause's save, queued behind that iteration, is the last one.
  await expect(page.getByTestId('run-state')).toHaveText('Paused', { timeout: 60_000 });
  await expect(page.getByTestId('notice')).toContainText('Paused: paused by the user', { timeout: 60_000 });
  // The state Pause saves is the second arm's (the first arm's, saved at its end, is replaced).
  const armRun = await page.evaluate(() => (JSON.parse(localStorage.getItem('ppo-playground-run-both') ?? '{}') as { runId?: string }).runId);
  expect(armRun).toBeTruthy();
  // Saved after the arm's last iteration: the state's iteration is the run's count of iterations.
  await expect
    .poll(
      async () => {
        const st = await savedState(page);
        const its = (await runList(page))[1]?.its ?? -1;
        return st && st.runId === armRun && st.iter >= 1 && st.iter === its ? st.iter : 0;
      },
      { timeout: 60_000 },
    )
    .toBeGreaterThanOrEqual(1);
  const k = (await savedState(page))!.iter;
  await page.waitForTimeout(1_500); // the run records' throttled save
  await page.reload();
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  const offer = page.getByTestId('sequence-offer');
  await expect(offer).toContainText(`“${paired.name}” (Run both) was interrupted by the reload at arm 2 of ${labels.length}, “${labels[1]}”, saved after iteration ${k} of 6.`);
  await expect(offer).toContainText(`“${labels[0]}” is finished.`);
  // One offer for that run, not the generic one beside it.
  await expect(page.getByTestId('resume-offer')).toHaveCount(0);
  await offer.getByRole('button', { name: `Resume “${labels[1]}” from iteration ${k}` }).click();
  await expect(page.getByTestId('sequence-status')).toContainText(`Arm 2 of ${labels.length}: ${labels[1]}`);
  await expect.poll(() => runList(page), { timeout: 150_000 }).toEqual(labels.map((name) => ({ name, its: 6 })));
  await expect(page.getByTestId('notice')).toContainText(`"${paired.name}" done`);
  await expect(page.locator('[data-testid="notice"].error')).toHaveCount(0);
  // Finished: a reload offers nothing more.
  await page.waitForTimeout(1_500);
  await page.reload();
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  await expect(page.getByTestId('run-list')).toBeVisible();
  await expect(page.getByTestId('sequence-offer')).toHaveCount(0);
});

test('a trainer error in the middle of Run both says which arm stopped and what Start and Reset do; Start goes on', async ({ page }) => {
  test.setTimeout(240_000);
  const paired = cheapestPaired();
  const labels = paired.arms!.map((a) => a.label);
  await open(page, `${TINY_QUERY}&budget=2`);
  await page.getByRole('button', { name: paired.name, exact: true }).click();
  await page.getByTestId('run-arms').click();
  await expect.poll(async () => (await runList(page))[0]?.its ?? 0, { timeout: 90_000 }).toBeGreaterThanOrEqual(1);
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await expect(page.getByTestId('notice')).toContainText('Paused: paused by the user', { timeout: 60_000 });
  // The worker says "paused" at once and lets the iteration in flight finish: its stage turns idle
  // just before its metrics, which reach the run list on the metric feed's next animation frame
  // (metricFeed.ts). Read the count once the trainer is idle and two frames have passed.
  await expect(page.locator('ol.pipeline')).toHaveAttribute('data-stage', 'idle', { timeout: 60_000 });
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  // The pause may land after the first arm's last iteration, when the second arm is the one in
  // progress: the sequence's own line says which arm holds, and the run list its iterations.
  const arm = Number(/Arm (\d+) of/.exec((await page.getByTestId('sequence-status').textContent()) ?? '')?.[1] ?? NaN);
  expect(arm).toBeGreaterThanOrEqual(1);
  // The run list may still be a frame behind the paused iteration under load: read it once it stops changing.
  let done = -1;
  await expect
    .poll(
      async () => {
        const now = (await runList(page)).find((r) => r.name === labels[arm - 1])?.its ?? 0;
        const same = now === done;
        done = now;
        return same;
      },
      { intervals: [500] },
    )
    .toBe(true);
  // The error as the worker reports it (the message hook feeds the page exactly what the worker would post).
  await page.evaluate(() => window.ppoPlayground!.receive({ type: 'error', message: 'buffer mapping failed (test)', stage: 'update' }));
  const notice = page.locator('[data-testid="notice"].error');
  await expect(notice).toContainText(`“${paired.name}” (Run both) stopped at arm ${arm} of ${labels.length}, “${labels[arm - 1]}”, after ${done} of 2 iterations.`);
  await expect(notice).toContainText('Trainer error during update: buffer mapping failed (test).');
  await expect(notice).toContainText(`Start retries this arm from iteration ${done}; Reset ends Run both (finished arms are kept).`);
  await expect(page.getByTestId('sequence-status')).toContainText('stopped by a trainer error (buffer mapping failed (test))');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await expect(page.getByTestId('sequence-status')).not.toContainText('stopped by');
  await expect.poll(() => runList(page), { timeout: 180_000 }).toEqual(labels.map((name) => ({ name, its: 2 })));
  await expect(page.getByTestId('notice')).toContainText(`"${paired.name}" done`);
});
