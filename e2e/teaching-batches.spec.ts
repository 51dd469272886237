// The teaching views keep each run's latest batch across a reload (IndexedDB `batches`): after
// training a couple of iterations on the real trainer and reloading, the clipping and samples views
// still show that batch, and the clipping view names the ε it was trained with, counting a batch
// with other current settings only as a labelled what-if. With two runs' batches a labelled picker
// chooses whose batch the views show; a deleted run takes its saved batch with it.
import type { Page } from '@playwright/test';
import { expect, skipWarmUp, test } from './fixtures.ts';
import type { WorkerToPage } from '../src/worker/protocol.ts';
import { ratioMessage, send } from './trainerMessages.ts';

const SMALL = 'promptsPerBatch=2&samplesPerPrompt=2&maxResponseLength=4&ppoEpochs=1&miniBatches=1';

/** Run ids with a saved batch, and each one's samples iteration (read in the page, as a reload would). */
function savedBatches(page: Page): Promise<{ runId: string; iter: number | null }[]> {
  return page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const r = indexedDB.open('ppo-playground');
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    if (!Array.from(db.objectStoreNames).includes('batches')) {
      db.close();
      return [];
    }
    const all = await new Promise<{ runId: string; samples: { iter: number } | null }[]>((resolve, reject) => {
      const req = db.transaction('batches', 'readonly').objectStore('batches').getAll();
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    db.close();
    return all.map((b) => ({ runId: b.runId, iter: b.samples?.iter ?? null }));
  });
}

async function iterations(page: Page): Promise<number> {
  const chip = page.getByTestId('run-list').getByRole('listitem').first();
  if ((await chip.count()) === 0) return 0;
  return Number(/(\d+) it/.exec((await chip.textContent()) ?? '')?.[1] ?? 0);
}

test('after training and a reload the teaching views still show the last batch, with the ε it was trained with', async ({ page }) => {
  test.setTimeout(180_000);
  await page.goto(`/?${SMALL}`);
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await expect.poll(() => iterations(page), { timeout: 90_000 }).toBeGreaterThanOrEqual(2);
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await expect(page.getByTestId('run-state')).toHaveText('Paused');
  const clip = page.getByTestId('view-clipping');
  await expect(clip).toContainText(/ratios of iteration \d+, trained with ε = 0\.2, dual clip c = 3 /);
  // the batch saved is the one on show (the in-flight iteration may land after the pause)
  const shownIter = async () => Number(/ratios of iteration (\d+)/.exec((await clip.textContent()) ?? '')?.[1]);
  const savedIsShown = async () => {
    const saved = await savedBatches(page);
    return saved.length === 1 && saved[0].iter === (await shownIter());
  };
  await expect.poll(savedIsShown, { timeout: 15_000 }).toBe(true);
  await page.waitForTimeout(3_000); // an iteration in flight at the click lands, and is saved in turn
  await expect.poll(savedIsShown, { timeout: 15_000 }).toBe(true);
  const iter = await shownIter();

  // Reload with other clip settings in the link: the batch comes back, trained with ε = 0.2; ε = 0.1 is a what-if.
  await page.goto(`/?${SMALL}&clipLow=0.1&clipHigh=0.1`);
  await expect(page.getByTestId('run-list').getByRole('listitem')).toHaveCount(1);
  await expect(clip).not.toContainText('No ratios yet');
  await expect(clip).toContainText(`ratios of iteration ${iter}, trained with ε = 0.2, dual clip c = 3 `);
  await expect(clip).toContainText('Your settings now (ε = 0.1, dual clip c = 3) are not what this batch was trained with');
  await expect(clip.getByRole('figure', { name: 'Clipped objective for A > 0' })).toContainText(
    /\d+ tokens, \d+ clipped \([\d.]+%\) · what if ε = 0\.1, dual clip c = 3: \d+ clipped/,
  );
  // the histogram has bars: the ratios themselves came back, not just the caption
  await expect(clip.locator('rect[fill="#c7d2fe"]:not([height="0"]), rect[fill="#f4a3a8"]:not([height="0"])').first()).toBeAttached();

  await page.getByRole('tab', { name: 'Samples', exact: true }).click();
  const samples = page.getByTestId('view-samples');
  await expect(samples).toContainText(`iteration ${iter}`);
  await expect(samples.locator('.sample')).not.toHaveCount(0);
  await page.getByRole('tab', { name: 'Three policies' }).click();
  await expect(page.getByTestId('view-policies').getByLabel('Sample', { exact: true })).toBeVisible();
  // one run's batch: nothing to pick
  await expect(page.getByLabel('Batch from run')).toHaveCount(0);
  await expect(page.locator('[data-testid="notice"].error')).toHaveCount(0);
});

/** A samples message whose one row reads `prompt` → `response`. */
const samplesOf = (iter: number, prompt: string, response: string): WorkerToPage => ({
  type: 'samples',
  iter,
  rows: [{ prompt, response, reward: 1, endedWithEos: true, tokens: [...response].map((text) => ({ text, advantage: 0.5, kl: 0.01, ratio: 1, value: 0.2 })) }],
});

// Fed trainer messages, nothing in this block trains: its pages skip the trainer warm-up (fixtures.ts).
test.describe(() => {
  test.use({ warmUp: false });
  test('with two runs the picker chooses whose batch the views show; it survives a reload; a deleted run takes its batch', async ({ page }) => {
    test.setTimeout(120_000);
    await page.goto('/');
    await send(page, [{ type: 'metrics', iter: 0, values: { reward_mean: 0 } }, samplesOf(7, 'first=', 'aaaa'), ratioMessage(50)]);
    await page.getByRole('button', { name: 'Reset', exact: true }).click();
    await send(page, [{ type: 'metrics', iter: 0, values: { reward_mean: 1 } }, samplesOf(9, 'second=', 'bbbb')]);
    const runs = page.getByTestId('run-list').getByRole('listitem');
    await expect(runs).toHaveCount(2);
    const firstName = await runs.nth(0).getByRole('textbox', { name: 'Run name' }).inputValue();

    await page.getByRole('tab', { name: 'Samples', exact: true }).click();
    const view = page.getByTestId('view-samples');
    const picker = page.getByLabel('Batch from run');
    // the run training is on show by default
    await expect(view).toContainText('second=');
    await expect(picker.locator('option')).toHaveCount(2);
    await picker.selectOption({ label: `${firstName} — iteration 7` });
    await expect(view).toContainText('first=');
    await expect(view).toContainText('iteration 7');
    await page.getByRole('tab', { name: 'Clipping' }).click();
    await expect(page.getByTestId('view-clipping')).toContainText('ratios of iteration 42');

    await expect.poll(async () => (await savedBatches(page)).length, { timeout: 10_000 }).toBe(2);
    await page.waitForTimeout(1_500); // the runs' own save
    await page.reload();
    await expect(runs).toHaveCount(2);
    await expect(picker.locator('option')).toHaveCount(2);
    await picker.selectOption({ label: `${firstName} — iteration 7` });
    await expect(page.getByTestId('view-clipping')).toContainText('ratios of iteration 42');
    await page.getByRole('tab', { name: 'Samples', exact: true }).click();
    await expect(view).toContainText('first=');

    const secondId = (await savedBatches(page)).find((b) => b.iter === 9)!.runId;
    await page.getByRole('button', { name: `Delete ${await runs.nth(1).getByRole('textbox', { name: 'Run name' }).inputValue()}` }).click();
    await expect(runs).toHaveCount(1);
    await expect(picker).toHaveCount(0);
    await expect.poll(async () => (await savedBatches(page)).map((b) => b.runId), { timeout: 10_000 }).not.toContain(secondId);
    await expect(view).toContainText('first=');
  });

  test('three policies: the tokens rejection sampling dropped are marked, with a legend, in both languages', async ({ browser }) => {
    for (const [lang, tab, legend, said, knob] of [
      ['en', 'Three policies', 'dropped by rejection sampling', 'Rejection sampling token_k2 (threshold 0.01) dropped 2 of this sample’s 4 tokens', 'Rejection sampling'],
      ['zh-CN', '三个策略', '被拒绝采样剔除', '拒绝采样 token_k2（阈值 0.01）把此样本 4 个 token 中的 2 个从损失中剔除', '拒绝采样'],
    ] as const) {
      // A fresh context per language: its own stored runs, so the shown batch is this load's.
      const context = await browser.newContext();
      await skipWarmUp(context);
      const page = await context.newPage();
      await page.goto(`/?lang=${lang}&rolloutRs=token_k2&rolloutRsThreshold=0.01`);
      // The link's settings are applied once the page has mounted (later in Chinese, whose texts load
      // first); the run the messages below start takes the settings of that moment.
      await expect(page.getByLabel(knob, { exact: true })).toHaveValue('token_k2');
      const lp = [-0.1, -0.5, -2, -0.3];
      const dropped = [false, true, true, false];
      await send(page, [
        { type: 'metrics', iter: 0, values: { reward_mean: 0, rollout_old_kl: 0.01, rollout_corr_rollout_rs_masked_fraction: 0.25 } },
        {
          type: 'samples',
          iter: 3,
          rows: [
            {
              prompt: 'p=',
              response: 'abcd',
              reward: 1,
              endedWithEos: true,
              tokens: [...'abcd'].map((text, i) => ({
                text,
                advantage: 0.5,
                kl: 0.01,
                ratio: 1,
                value: 0.2,
                oldLogprob: lp[i],
                rolloutLogprob: lp[i] - 0.3 * i,
                newLogprob: lp[i],
                rejected: dropped[i],
              })),
            },
          ],
        },
      ]);
      await page.getByRole('tab', { name: tab, exact: true }).click();
      const view = page.getByTestId('view-policies');
      await expect(view.getByTestId('rejected-token')).toHaveCount(2);
      await expect(view).toContainText(legend);
      await expect(view.getByTestId('policies-rejected')).toContainText(said);
      await expect(view.getByTestId('policies-rejected')).toContainText('25.0%');
      await context.close();
    }
  });
});
